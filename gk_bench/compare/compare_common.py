"""What every comparison script shares: arguments, the dry run, random inputs, the timing rules,
the check against torch, and the table of rows (printed, and written as JSON and CSV).

The timing rules are those of the C++ benches (gk_bench/gk_bench.h), in one process with torch:
  - CUDA events around each timed call, a warm-up first, the median of --reps calls;
  - gk and torch (and any other torch version of the case) take turns, call by call, so that the
    GPU's clock and power drift fall on all of them alike: their ratio is what the row is for;
  - nothing is served from L2: where the C++ benches flush it before each call, a case here
    rotates over enough copies of its inputs and outputs that a set's bytes have left the L2
    (twice its size of other traffic) before the set comes round again (torch's results are kept
    alive over the same rotation, so its outputs rotate too);
  - before each timed call the GPU sleeps (torch.cuda._sleep) a little longer than the CPU takes
    to issue the call, so the call is queued before the start event runs: the time is the GPU's,
    not Python's or the launch path's;
  - inputs are random (never zeros); gk's outputs start as NaN and are checked against torch's
    result before anything is timed; a mismatch skips the timing, is reported, and makes the
    script exit non-zero;
  - the copy roof is measured in the same process: the best of torch's device-to-device copy
    (dst.copy_(src)) of 1 GiB, counting bytes read and written. It is torch's copy, not a tuned
    copy kernel (the C++ benches take the better of both), so a kernel at the memory limit can
    read a point or so above 100%.
"""

import argparse
import csv
import datetime
import json
import math
import os
import statistics
import sys
import time
import traceback

from gk_ctypes import Gk, missing_symbols

HERE = os.path.dirname(os.path.abspath(__file__))
# In a bundle (tools/bundle.sh) the scripts are in compare/ and the library in lib/.
DEFAULT_LIB = os.path.normpath(os.path.join(HERE, "..", "lib", "libgk.so"))


def parse_args(description):
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib", default=DEFAULT_LIB, help="path of libgk.so (default: %(default)s)")
    p.add_argument("--out", default="compare_out", help="folder for the rows as JSON and CSV (default: %(default)s)")
    p.add_argument("--dry-run", action="store_true",
                   help="check the arguments and that every gk symbol resolves in --lib; no CUDA, no torch")
    p.add_argument("--reps", type=int, default=30, help="timed calls per measurement, median taken (default: 30)")
    p.add_argument("--warmup", type=int, default=5, help="untimed calls before timing (default: 5)")
    p.add_argument("--only", default="", help="run only the cases whose work name contains this string")
    args = p.parse_args()
    if args.reps < 1 or args.warmup < 0:
        p.error("--reps must be at least 1 and --warmup at least 0")
    return args


def dry_run(args, script, dry_check=None):
    """Checks what can be checked without a GPU: the library loads and exports every symbol, and
    dry_check(lib_path), where given, returns no problems (a list of strings: e.g. struct mirrors
    checked through host-only calls)."""
    if not os.path.isfile(args.lib):
        print("%s: dry run: no library at %s" % (script, args.lib))
        return 1
    missing = missing_symbols(args.lib)
    if missing:
        print("%s: dry run: %s lacks %s" % (script, args.lib, ", ".join(missing)))
        return 1
    problems = dry_check(args.lib) if dry_check else []
    for problem in problems:
        print("%s: dry run: %s" % (script, problem))
    if problems:
        return 1
    print("%s: dry run: every gk symbol resolves in %s%s; output would go to %s" %
          (script, args.lib, " and its host-side checks pass" if dry_check else "", args.out))
    return 0


def fmt(v, digits=1):
    if v is None:
        return "-"
    if isinstance(v, float):
        return "%.*f" % (digits, v)
    return str(v)


class Session:
    """One script's run: torch, libgk.so, the device's copy roof, and the rows measured so far."""

    def __init__(self, args, script):
        import torch  # here, not at the top: --dry-run needs no torch

        self.torch = torch
        self.args = args
        self.script = script
        self.gk = Gk(args.lib)
        self.reps, self.warmup = args.reps, args.warmup
        self.rows, self.failures = [], []
        props = torch.cuda.get_device_properties(0)
        self.device_name = props.name
        self.l2_bytes = getattr(props, "L2_cache_size", 0) or (60 << 20)
        self.stream = torch.cuda.current_stream().cuda_stream  # a cudaStream_t for gk (0: legacy default)
        self.cycles_per_us = self._sleep_rate()
        self.copy_bytes_per_s = self._copy_roof()
        print("%s: %s, L2 %d MB, torch %s, CUDA %s; lib %s" % (script, self.device_name, self.l2_bytes >> 20,
                                                              torch.__version__, torch.version.cuda, args.lib))
        print("%s: copy roof %.0f GB/s (best of dst.copy_(src), 1 GiB, read + write)" %
              (script, self.copy_bytes_per_s * 1e-9))
        self._header_printed = False

    # ------------------------------------------------------------------ inputs

    def randn(self, *shape, scale=1.0):
        """bf16 N(0, scale^2) values on the GPU (never all zero)."""
        t = self.torch.randn(*shape, dtype=self.torch.bfloat16, device="cuda")
        return t.mul_(scale) if scale != 1.0 else t

    def nan(self, *shape):
        """A bf16 output, all NaN: an element gk never writes fails the check."""
        return self.torch.full(shape, float("nan"), dtype=self.torch.bfloat16, device="cuda")

    MAX_SETS = 256

    def sets_for(self, bytes_per_set, make):
        """The input sets a case rotates over: make() called once per set, enough sets that between two
        uses of one set at least twice the L2 of other sets' bytes has gone through, at most MAX_SETS
        (a case of a few kilobytes would need a million: its sets then stay in L2, gk's and torch's
        alike)."""
        count = min(1 + math.ceil(2 * self.l2_bytes / bytes_per_set), self.MAX_SETS)
        return [make() for _ in range(count)]

    # ------------------------------------------------------------------ timing

    def _sleep_rate(self):
        torch = self.torch
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(1000)
        a.record()
        torch.cuda._sleep(2000000)
        b.record()
        b.synchronize()
        return 2000000 / (a.elapsed_time(b) * 1e3)

    def time_samples_us(self, contenders):
        """Microseconds of each timed call, a list per contender. A contender is a list of closures, one
        per input set. The contenders take turns: rep i times each once, so that clock and power drift
        fall on all of them alike; call j of the run (over all contenders) takes set j % sets, so a set
        comes round again only after every other set has gone through."""
        torch = self.torch
        n = len(contenders[0])
        keep = [[None] * n for _ in contenders]  # each result stays alive until its set comes round
        cpu_us = 0.0
        for c, calls in enumerate(contenders):
            for i in range(max(self.warmup, n)):
                keep[c][i % n] = calls[i % n]()
            torch.cuda.synchronize()
            t0 = time.perf_counter()  # what the CPU takes to issue one call (the GPU queues them)
            for i in range(max(n, 3)):
                keep[c][i % n] = calls[i % n]()
            cpu_us = max(cpu_us, (time.perf_counter() - t0) / max(n, 3) * 1e6)
            torch.cuda.synchronize()
        sleep_cycles = int(self.cycles_per_us * (2 * cpu_us + 20))
        events = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                   for _ in range(self.reps)] for _ in contenders]
        j = 0
        for i in range(self.reps):
            for c, calls in enumerate(contenders):
                start, end = events[c][i]
                torch.cuda._sleep(sleep_cycles)
                start.record()
                keep[c][j % n] = calls[j % n]()
                end.record()
                j += 1
        torch.cuda.synchronize()
        return [[start.elapsed_time(end) * 1e3 for start, end in pairs] for pairs in events]

    def time_us(self, contenders):
        """The median microseconds of one call of each contender (time_samples_us)."""
        return [statistics.median(samples) for samples in self.time_samples_us(contenders)]

    def _copy_roof(self):
        torch = self.torch
        n = 1 << 30
        src = torch.empty(n // 4, dtype=torch.float32, device="cuda").uniform_(-1, 1)
        dst = torch.empty_like(src)
        best_us = min(self.time_samples_us([[lambda: dst.copy_(src)]])[0])
        del src, dst
        torch.cuda.empty_cache()
        return 2.0 * n / (best_us * 1e-6)

    # ------------------------------------------------------------------ checks

    def check(self, what, got, want, rtol, atol):
        """|got - want| <= atol + rtol |want| for every element (NaN fails); prints the first misses."""
        g, w = got.float(), want.float()
        bad = ~((g - w).abs() <= atol + rtol * w.abs())
        nbad = int(bad.sum().item())
        if nbad == 0:
            return True
        where = bad.flatten().nonzero()[:5].flatten().tolist()
        gf, wf = g.flatten(), w.flatten()
        print("  MISMATCH %s: %d of %d elements outside |gk - torch| <= %g + %g |torch|" %
              (what, nbad, bad.numel(), atol, rtol))
        for i in where:
            print("    element %d: gk %r, torch %r" % (i, gf[i].item(), wf[i].item()))
        return False

    # ------------------------------------------------------------------ one case

    def wants(self, work):
        """Whether --only lets this case run."""
        return not self.args.only or self.args.only in work

    def measure(self, work, shape, set_bytes, make_set, gk, ref, check, bytes_min=None, flops=None, others=None,
                notes=None):
        """One row. make_set() returns one set of inputs and outputs (a dict of tensors, gk's outputs
        all NaN) of set_bytes bytes; the case rotates over as many as sets_for says. gk(s) launches gk
        on set s; ref(s) is the torch call a user would make, returning its result; check(s, result)
        compares s's gk outputs with that result. bytes_min: the fewest bytes the work moves (gives %
        of the copy roof); flops: gives TFLOP/s (of the others too). others: {name: function of a set,
        or None where it could not run}, further torch versions timed against gk. notes: a dict whose
        items join the row's notes (the check may fill it, e.g. with its largest error; keys ending
        in _err print as %.2g)."""
        if not self.wants(work):
            return
        torch = self.torch
        torch.cuda.empty_cache()  # the last case's tensors are gone: hand their memory back
        row = {"work": work, "shape": shape, "gk_us": None, "torch_us": None, "torch_over_gk": None,
               "gk_pct_copy": None, "torch_pct_copy": None, "gk_tflops": None, "torch_tflops": None}
        for name in others or {}:
            row[name + "_us"] = None
            row[name + "_over_gk"] = None
            if flops:
                row[name + "_tflops"] = None
        row["status"] = "ok"
        try:
            sets = self.sets_for(set_bytes, make_set)
            gk(sets[0])
            torch.cuda.synchronize()
            if not check(sets[0], ref(sets[0])):
                row["status"] = "MISMATCH"
            else:
                # gk, torch, then the other torch versions that could run, timed in turns
                names = ["gk", "torch"] + [name for name, fn in (others or {}).items() if fn is not None]
                fns = [gk, ref] + [fn for fn in (others or {}).values() if fn is not None]
                medians = self.time_us([[lambda s=s, fn=fn: fn(s) for s in sets] for fn in fns])
                for name, us in zip(names, medians):
                    row[name + "_us"] = us
                row["torch_over_gk"] = row["torch_us"] / row["gk_us"]
                for name in names[2:]:
                    row[name + "_over_gk"] = row[name + "_us"] / row["gk_us"]
                if bytes_min:
                    row["gk_pct_copy"] = 100.0 * bytes_min / (row["gk_us"] * 1e-6) / self.copy_bytes_per_s
                    row["torch_pct_copy"] = 100.0 * bytes_min / (row["torch_us"] * 1e-6) / self.copy_bytes_per_s
                if flops:
                    for name in names:
                        row[name + "_tflops"] = flops / (row[name + "_us"] * 1e-6) * 1e-12
        except Exception as e:  # a gk error (GkError), torch's (out of memory, a CUDA error), ...
            traceback.print_exc()
            row["status"] = "ERROR: %s" % (str(e).splitlines() or [type(e).__name__])[0][:200]
        row.update(notes or {})
        if row["status"] != "ok":
            self.failures.append("%s %s: %s" % (work, shape, row["status"]))
        self.rows.append(row)
        self._print_row(row)

    # ------------------------------------------------------------------ the table

    COLUMNS = [("work", "%-28s", "work"), ("shape", "%-26s", "shape"), ("gk_us", "%10s", "gk us"),
               ("torch_us", "%10s", "torch us"), ("torch_over_gk", "%9s", "torch/gk"),
               ("gk_pct_copy", "%9s", "gk %copy"), ("torch_pct_copy", "%9s", "tch %copy"),
               ("gk_tflops", "%9s", "gk TF/s"), ("torch_tflops", "%9s", "tch TF/s")]

    def _print_row(self, row):
        if not self._header_printed:
            print(" ".join(f % title for _, f, title in self.COLUMNS) + "  notes")
            self._header_printed = True
        cells = []
        for key, f, _ in self.COLUMNS:
            digits = 2 if key == "torch_over_gk" else 1
            cells.append(f % fmt(row[key], digits))
        known = set(k for k, _, _ in self.COLUMNS) | {"status"}
        notes = ["%s %s" % (k, "%.2g" % v if k.endswith("_err") and isinstance(v, float)
                            else fmt(v, 2 if k.endswith("_over_gk") else 1)) for k, v in row.items() if k not in known]
        if row["status"] != "ok":
            notes.insert(0, row["status"])
        print(" ".join(cells) + "  " + ", ".join(notes), flush=True)

    def finish(self):
        """Writes OUT/<script>.json and OUT/<script>.csv; returns the exit status (1 if any case failed)."""
        os.makedirs(self.args.out, exist_ok=True)
        meta = {"script": self.script, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                "gpu": self.device_name, "l2_bytes": self.l2_bytes, "torch": self.torch.__version__,
                "torch_cuda": self.torch.version.cuda, "lib": os.path.abspath(self.args.lib),
                "copy_GBps": self.copy_bytes_per_s * 1e-9, "reps": self.reps, "warmup": self.warmup,
                "failures": self.failures}
        base = os.path.join(self.args.out, self.script)
        with open(base + ".json", "w") as f:
            json.dump({"context": meta, "rows": self.rows}, f, indent=1)
        keys = []
        for row in self.rows:
            keys += [k for k in row if k not in keys]
        with open(base + ".csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(self.rows)
        print("%s: %d rows written to %s.json and .csv" % (self.script, len(self.rows), base))
        if self.failures:
            print("%s: FAILED: %s" % (self.script, "; ".join(self.failures)))
            return 1
        return 0


def main(script, description, run_cases, dry_check=None):
    """Parses the arguments; a dry run checks the library (and runs dry_check(lib_path), where given),
    else run_cases(session) measures every case."""
    args = parse_args(description)
    if args.dry_run:
        sys.exit(dry_run(args, script, dry_check))
    session = Session(args, script)
    run_cases(session)
    sys.exit(session.finish())
