"""Offline stand-in for rules_cc: Bazel 4.2.3's own cc rules, re-exported.

Debian's bazel-rules-cc is too new for Bazel 4.2.3 (it loads use_cpp_toolchain),
and @bazel_tools//tools/cpp loads these names from @rules_cc.
"""

cc_binary = native.cc_binary
cc_import = native.cc_import
cc_library = native.cc_library
cc_proto_library = native.cc_proto_library
cc_test = native.cc_test
cc_toolchain = native.cc_toolchain
cc_toolchain_suite = native.cc_toolchain_suite
fdo_prefetch_hints = native.fdo_prefetch_hints
fdo_profile = native.fdo_profile
objc_library = native.objc_library
objc_import = native.objc_import
