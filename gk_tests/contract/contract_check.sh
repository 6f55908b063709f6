#!/bin/bash
# Contract check of one compiled translation unit, kernel by kernel, in its PTX and its SASS.
#
# usage: contract_check.sh PTXAS_REPORT PTX SASS RES_USAGE EXPECT...
#   PTXAS_REPORT  nvcc -Xptxas -v output (registers, stack frame, spills per function)
#   PTX           the TU's PTX
#   SASS          cuobjdump -sass of the compiled object (encodings may be dropped)
#   RES_USAGE     cuobjdump -res-usage of the same object (REG, STACK, LOCAL per function)
#   EXPECT        files of rules, below
#
# Checked for every kernel (each .entry of the PTX), whatever the rules say:
#   - it is in all four reports;
#   - no stack frame and no spills: 0 bytes stack frame, spill stores and spill loads in the ptxas
#     report (for the functions a kernel calls too), STACK:0 and LOCAL:0 in the resource usage,
#     and no local-memory instruction (LDL, STL) in its SASS;
#   - it is not empty: its PTX holds more than `ret;`, its SASS more than EXIT, BRA and NOP (and
#     the load of the stack pointer R1 from c[0x0][0x28] that every kernel opens with).
#
# Rules: one a line, fields separated by TABs; blank lines and lines starting with # are skipped.
# KERNEL is an extended regex (grep -E) that selects kernels by their name as the PTX spells it
# (mangled: _Z21gk_rd_quant_f16_split10gk_rd_args, so match inside it rather than anchor it).
# PATTERN is an extended regex (grep -E) that one line must match: a line of the kernel's PTX (its
# body and the bodies of the .func it calls; .loc lines and comments dropped), or one instruction
# of its SASS as cuobjdump prints it without address and encoding, e.g.
# "@!P0 HMMA.16816.F32.BF16 R4, R8, R12, R4 ;". A per-kernel rule whose KERNEL selects no kernel
# fails; an unknown or malformed rule fails.
#
#   kernels        N                          exactly N kernels in the TU
#   kernels_named  KERNEL   N        why      exactly N kernels match KERNEL (0 allowed)
#   max_registers  N        why               every kernel within N registers
#   register_budget KERNEL  N        why      every kernel matching KERNEL within N registers
#   ptx            KERNEL   PATTERN  why      every kernel matching KERNEL has a PTX line matching PATTERN
#   sass           KERNEL   PATTERN  why      ... a SASS instruction matching PATTERN
#   ptx_absent     KERNEL   PATTERN  why      no PTX line of any kernel matching KERNEL matches PATTERN
#   sass_absent    KERNEL   PATTERN  why      ... no SASS instruction
#   ptx_tu         PATTERN  why               some line of the TU's PTX matches PATTERN (a promise of
#                                             the TU, kept for what no kernel can be named for)
#   sass_tu        PATTERN  why               some SASS instruction of the TU matches PATTERN
#   ptxas_absent   PATTERN  why               no line of the ptxas report matches PATTERN, e.g. a
#                                             remark such as "(C7515) ... wgmma.mma_async
#                                             instructions are serialized" (the whole report: such
#                                             remarks come before the kernels' own lines)
#   (why is optional after `kernels N`.)
#
# Output: a table of the kernels (registers, stack, spill bytes, SASS instructions), then one
# "ok" or "FAIL" line per check and rule; a failing one lists the kernels it fails for.
set -u
if [ $# -lt 5 ]; then
    echo "usage: $0 PTXAS_REPORT PTX SASS RES_USAGE EXPECT..." >&2
    exit 2
fi
report=$1 ptx=$2 sass=$3 res=$4
shift 4
expects=("$@")

work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/contract.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ptx" "$work/sass"
: > "$work/empty"

fail=0
failed_rules=0
ok() { echo "ok   $*"; }
bad() {
    echo "FAIL $*"
    fail=1
    failed_rules=$((failed_rules + 1))
}

# The kernel's name as a reader knows it: _Z21gk_rd_quant_f16_split10gk_rd_args is
# gk_rd_quant_f16_split (a C name stays as it is).
short() {
    awk '{ n = $0; if (match(n, /^_Z[0-9]+/)) { len = substr(n, 3, RLENGTH - 2) + 0;
                                                n = substr(n, RLENGTH + 1, len) } print n }'
}

# Lists kernels (one a line, mangled) on stdin, short names, 12 at most, indented; the empty
# kernels (listed by their own check) only counted.
list_kernels() {
    awk -v empty="$work/empty" 'BEGIN { while ((getline k < empty) > 0) e[k] = 1 }
        ($0 in e) { ne++; next } { print }
        END { if (ne) print "+ " ne " empty kernel" (ne > 1 ? "s" : "") " (listed above)" }' |
        short | awk '/^\+ / { tail = $0; next } { if (++n <= 12) print "       " $0 }
                     END { if (n > 12) print "       ... and " n - 12 " more"; if (tail != "") print "       " tail }'
}

for f in "$report" "$ptx" "$sass" "$res" "${expects[@]}"; do
    [ -r "$f" ] || { echo "FAIL cannot read $f"; exit 1; }
done

# --- Split the PTX by function: ptx/NAME holds the body of each .entry and .func, without .loc
# lines, comments and blank lines. entries: the kernels; funcs: the rest.
awk -v dir="$work/ptx" -v entries="$work/entries" -v funcs="$work/funcs" '
function begin(name, list) {
    if (out != "") close(out)
    out = dir "/" name
    if (!(name in seen)) { seen[name] = 1; print name > list; printf "" > out }
}
/^(\.visible |\.weak )*\.entry / {
    s = $0; sub(/^.*\.entry[ \t]+/, "", s); sub(/[( \t].*$/, "", s)
    begin(s, entries); body = 1; inside = 0; depth = 0; next
}
/^(\.visible |\.weak |\.extern )*\.func / {
    s = $0; sub(/^.*\.func[ \t]+/, "", s)
    if (s ~ /^\(/) sub(/^\([^)]*\)[ \t]*/, "", s)
    sub(/[( \t].*$/, "", s)
    if (s == "") { out = ""; body = 0; next }
    begin(s, funcs); body = 1; inside = 0; depth = 0; next
}
# A body ends where its braces balance (a } at the start of a line can close inline asm); a
# declaration without a body, at its ;.
body && out != "" {
    if ($0 ~ /^[ \t]*$/ || $0 ~ /^[ \t]*\.loc[ \t]/ || $0 ~ /^[ \t]*\/\//) next
    if (!inside && $0 ~ /;[ \t]*$/ && $0 !~ /^[ \t]*\./) { close(out); out = ""; body = 0; next }
    print >> out
    line = $0; sub(/\/\/.*$/, "", line)
    opened = gsub(/{/, "{", line); closed = gsub(/}/, "}", line)
    if (opened > 0) inside = 1
    depth += opened - closed
    if (inside && depth <= 0) { close(out); out = ""; body = 0; inside = 0; depth = 0 }
}' "$ptx"
touch "$work/entries" "$work/funcs"
sort -u "$work/entries" -o "$work/names"
n_kernels=$(wc -l < "$work/names")

# A kernel whose PTX holds no instruction but ret (or exit): its body compiled to nothing.
: > "$work/empty_ptx"
while read -r k; do
    if ! grep -vE '^[[:blank:]]*([.()]|\$[[:alnum:]_]+:|[{}][[:blank:]]*(//.*)?$|ret;|exit;)' "$work/ptx/$k" | grep -q .; then
        echo "$k" >> "$work/empty_ptx"
    fi
done < "$work/names"

# The .func a kernel calls, and what they call, become part of its PTX for the rules.
if [ -s "$work/funcs" ]; then
    while read -r k; do
        todo=$(grep -oFf "$work/funcs" "$work/ptx/$k" | sort -u)
        done_f=""
        while [ -n "$todo" ]; do
            next_f=""
            for f in $todo; do
                case " $done_f " in *" $f "*) continue ;; esac
                done_f="$done_f $f"
                cat "$work/ptx/$f" >> "$work/ptx/$k.all"
                next_f="$next_f $(grep -oFf "$work/funcs" "$work/ptx/$f" | sort -u | tr '\n' ' ')"
            done
            todo=$next_f
        done
        if [ -f "$work/ptx/$k.all" ]; then cat "$work/ptx/$k.all" >> "$work/ptx/$k"; rm "$work/ptx/$k.all"; fi
    done < "$work/names"
fi

# --- Split the SASS by function: sass/NAME holds its instructions, one a line, without address
# and encoding ("@P0 EXIT ;").
awk -v dir="$work/sass" '
/^[ \t]*Function : / { if (out != "") close(out); out = dir "/" $3; printf "" > out; next }
out != "" && /^[ \t]*\/\*[0-9a-f]+\*\// {
    sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, ""); sub(/[ \t]*\/\* 0x[0-9a-f]+ \*\/[ \t]*$/, "")
    print >> out
}' "$sass"
# A kernel the SASS lacks gets an empty instruction list (and fails the check of the reports).
: > "$work/not_in_sass"
while read -r k; do
    [ -f "$work/sass/$k" ] || { : > "$work/sass/$k"; echo "$k" >> "$work/not_in_sass"; }
done < "$work/names"

# --- Per-function figures. ptxas report: stack frame and spill bytes of every function (kernels
# and the functions they call); resource usage: REG, STACK, LOCAL.
awk '
/Function properties for / { name = $NF; next }
/bytes stack frame/ && name != "" { print name "\t" $1 "\t" $5 "\t" $9; name = "" }
' "$report" > "$work/ptxas.tsv"
awk '
/^[ \t]*Function .*:[ \t]*$/ { name = $2; sub(/:$/, "", name); next }
/REG:[0-9]+/ && name != "" {
    reg = stack = local = "?"
    for (i = 1; i <= NF; i++) {
        split($i, kv, ":")
        if (kv[1] == "REG") reg = kv[2]; else if (kv[1] == "STACK") stack = kv[2]; else if (kv[1] == "LOCAL") local = kv[2]
    }
    print name "\t" reg "\t" stack "\t" local; name = ""
}' "$res" > "$work/res.tsv"
grep -o "Compiling entry function '[^']*'" "$report" | sed "s/^[^']*'//; s/'$//" | sort -u > "$work/ptxas_entries"

# The table: kernel, registers, stack (bytes), spill bytes (stores + loads), SASS instructions
# (NOP padding not counted). kernels.tsv: name, REG, res-usage STACK, res-usage LOCAL, ptxas stack
# frame, ptxas spill bytes, SASS instructions (empty where a report lacks the kernel).
(cd "$work/sass" && grep -HcvE '^NOP ?;' -- * 2>/dev/null) | sed 's/:\([0-9]*\)$/\t\1/' > "$work/sass_count.tsv"
awk -F'\t' -v OFS='\t' '
FILENAME ~ /res.tsv$/ { reg[$1] = $2; stack[$1] = $3; local[$1] = $4; next }
FILENAME ~ /ptxas.tsv$/ { if (!($1 in frame)) { frame[$1] = $2; spill[$1] = $3 + $4 } next }
FILENAME ~ /sass_count.tsv$/ { count[$1] = $2; next }
{ print $1, reg[$1], stack[$1], local[$1], frame[$1], spill[$1], count[$1] }
' "$work/res.tsv" "$work/ptxas.tsv" "$work/sass_count.tsv" "$work/names" > "$work/kernels.tsv"

echo "kernels compiled: $n_kernels"
printf "%-44s %5s %6s %7s %6s\n" kernel regs stack spills sass
cut -f1 "$work/kernels.tsv" | short | paste - "$work/kernels.tsv" | sort -t$'\t' -k1,1 |
    awk -F'\t' 'function v(x) { return x == "" ? "?" : x }
                 { st = v($4); if ($6 != "" && $6 + 0 > st + 0) st = $6
                   printf "%-44.44s %5s %6s %7s %6s\n", $1, v($3), st, v($7), v($8) }'
echo "(regs: REG of cuobjdump -res-usage; stack: bytes, its STACK or the ptxas stack frame; spills: ptxas"
echo " spill store + load bytes; sass: SASS instructions, NOP padding not counted)"
echo

# --- The checks every kernel gets.
if [ "$n_kernels" -lt 1 ]; then
    bad "the PTX holds no kernel: nothing was checked"
fi

missing=$(
    while read -r k; do
        where=""
        grep -qxF -- "$k" "$work/ptxas_entries" || where="$where ptxas-report"
        grep -qxF -- "$k" "$work/not_in_sass" && where="$where SASS"
        cut -f1 "$work/res.tsv" | grep -qxF -- "$k" || where="$where res-usage"
        [ -n "$where" ] && echo "$(echo "$k" | short): not in$where"
    done < "$work/names"
)
unknown=$(grep -vxFf "$work/names" "$work/ptxas_entries")
if [ -n "$missing" ]; then
    bad "kernels of the PTX missing from the other reports:"
    echo "$missing" | sed 's/^/       /'
elif [ -n "$unknown" ]; then
    bad "kernels in the ptxas report that the PTX does not hold (or this script did not find):"
    echo "$unknown" | short | sed 's/^/       /'
else
    ok "all $n_kernels kernels in the ptxas report, the SASS and the resource usage"
fi

spilled=$(awk -F'\t' '$2 + 0 != 0 || $3 + 0 != 0 || $4 + 0 != 0 { print $1 ": " $2 " bytes stack frame, " $3 " bytes spill stores, " $4 " bytes spill loads" }' "$work/ptxas.tsv" | sort -u)
n_funcs=$(cut -f1 "$work/ptxas.tsv" | sort -u | wc -l)
if [ "$(grep -c 'bytes stack frame' "$report")" -ne "$(wc -l < "$work/ptxas.tsv")" ]; then
    bad "ptxas report: a stack frame line that names no function (the report's format changed?)"
elif [ -n "$spilled" ]; then
    bad "ptxas report: stack frame or spills (every kernel, and what it calls, must have none):"
    echo "$spilled" | sed 's/^/       /'
else
    ok "ptxas report: 0 bytes stack frame and 0 spills in all $n_funcs functions"
fi

stacked=$(awk -F'\t' 'NR == FNR { want[$1] = 1; next } ($1 in want) && ($3 != "0" || $4 != "0") { print $1 "\tSTACK:" $3 " LOCAL:" $4 }' \
    "$work/names" "$work/res.tsv")
if [ -n "$stacked" ]; then
    bad "resource usage: kernels with a stack or local memory:"
    echo "$stacked" | awk -F'\t' '{ print $1 }' | list_kernels
else
    ok "resource usage: STACK:0 LOCAL:0 in every kernel"
fi

local_mem=$(while read -r k; do
    grep -qE '(^|[[:blank:]])(LDL|STL)([.[:space:]]|$)' "$work/sass/$k" && echo "$k"
done < "$work/names")
if [ -n "$local_mem" ]; then
    bad "SASS: kernels that touch local memory (LDL/STL):"
    echo "$local_mem" | list_kernels
else
    ok "SASS: no LDL/STL in any kernel"
fi

empty_sass=$(while read -r k; do
    grep -qxF -- "$k" "$work/not_in_sass" && continue
    grep -vE '^(EXIT|BRA [^;]*|NOP) ?;$|^(MOV|IMAD\.MOV\.U32|LDC) R1, (RZ, RZ, )?c\[0x0\]\[0x28\] ;$' \
        "$work/sass/$k" | grep -q . || echo "$k"
done < "$work/names")
empty=$(printf "%s\n%s\n" "$(cat "$work/empty_ptx")" "$empty_sass" | grep . | sort -u)
printf "%s\n" "$empty" | grep . > "$work/empty"
if [ -n "$empty" ]; then
    bad "empty kernels ($(echo "$empty" | wc -l): PTX only ret, or SASS only EXIT/BRA/NOP):"
    echo "$empty" | while read -r k; do
        how=""
        grep -qxF -- "$k" "$work/empty_ptx" && how="PTX"
        echo "$empty_sass" | grep -qxF -- "$k" && how="${how:+$how, }SASS"
        echo "       $(echo "$k" | short) ($how)"
    done
else
    ok "no empty kernel (PTX more than ret, SASS more than EXIT/BRA/NOP)"
fi

# --- The rules of the expect files.
# Kernels whose name matches $1 (grep -E), one a line.
select_kernels() { grep -E -- "$1" "$work/names" 2>/dev/null; }

# with_line / without_line DIR PATTERN KERNELS...: those kernels (files in DIR) with a line
# matching PATTERN, or without one.
with_line() { (cd "$1" && grep -lE -- "$2" "${@:3}"); }
without_line() { (cd "$1" && grep -LE -- "$2" "${@:3}"); }
# grep -E exits 2 on a pattern it cannot compile.
valid_regex() { echo | grep -E -- "$1" > /dev/null 2>&1; [ $? -lt 2 ]; }

# One per-kernel presence/absence rule: KIND (ptx, sass), ABSENT (0, 1), KERNEL, PATTERN, WHY.
instruction_rule() {
    local kind=$1 absent=$2 kernel_re=$3 pattern=$4 why=$5 matched offenders n
    local dir="$work/$kind" name=$kind
    [ "$absent" = 1 ] && name=${kind}_absent
    matched=$(select_kernels "$kernel_re")
    if ! valid_regex "$kernel_re"; then
        bad "$name: /$kernel_re/ is not a valid extended regex ($why)"
        return
    elif [ -z "$matched" ]; then
        bad "$name /$kernel_re/ /$pattern/: no kernel matches /$kernel_re/ ($why)"
        return
    fi
    n=$(echo "$matched" | wc -l)
    if ! valid_regex "$pattern"; then
        bad "$name: /$pattern/ is not a valid extended regex ($why)"
        return
    fi
    # shellcheck disable=SC2086
    if [ "$absent" = 0 ]; then
        offenders=$(without_line "$dir" "$pattern" $matched)
    else
        offenders=$(with_line "$dir" "$pattern" $matched)
    fi
    if [ -n "$offenders" ]; then
        if [ "$absent" = 0 ]; then
            bad "$name: /$pattern/ missing from $(echo "$offenders" | wc -l) of $n kernels /$kernel_re/: $why"
        else
            bad "$name: /$pattern/ found in $(echo "$offenders" | wc -l) of $n kernels /$kernel_re/: $why"
        fi
        echo "$offenders" | list_kernels
    elif [ "$absent" = 0 ]; then
        ok "$name: /$pattern/ in all $n kernels /$kernel_re/: $why"
    else
        ok "$name: /$pattern/ in none of $n kernels /$kernel_re/: $why"
    fi
}

is_count() { [[ $1 =~ ^[0-9]+$ ]]; }

rules=0
for expect in "${expects[@]}"; do
    lineno=0
    while IFS= read -r line || [ -n "$line" ]; do
        lineno=$((lineno + 1))
        case "$line" in '' | '#'*) continue ;; esac
        IFS=$'\t' read -r -a f <<< "$line"
        where="$(basename "$expect"):$lineno"
        rules=$((rules + 1))
        case "${f[0]}" in
        kernels)
            if [ ${#f[@]} -lt 2 ] || ! is_count "${f[1]}"; then
                bad "$where: malformed rule (kernels<TAB>N[<TAB>why]): $line"
            elif [ "$n_kernels" -ne "${f[1]}" ]; then
                bad "kernels: $n_kernels compiled, ${f[1]} expected${f[2]:+: ${f[2]}}"
            else
                ok "kernels: exactly ${f[1]} compiled${f[2]:+: ${f[2]}}"
            fi
            ;;
        kernels_named)
            if [ ${#f[@]} -lt 4 ] || ! is_count "${f[2]}"; then
                bad "$where: malformed rule (kernels_named<TAB>KERNEL<TAB>N<TAB>why): $line"
                continue
            fi
            n=$(select_kernels "${f[1]}" | wc -l)
            if [ "$n" -ne "${f[2]}" ]; then
                bad "kernels_named /${f[1]}/: $n compiled, ${f[2]} expected: ${f[3]}"
                select_kernels "${f[1]}" | list_kernels
            else
                ok "kernels_named /${f[1]}/: exactly ${f[2]}: ${f[3]}"
            fi
            ;;
        max_registers | register_budget)
            if [ "${f[0]}" = max_registers ]; then
                kernel_re='.' budget=${f[1]:-} why=${f[2]:-every kernel}
                form="max_registers<TAB>N<TAB>why"
            else
                kernel_re=${f[1]:-} budget=${f[2]:-} why=${f[3]:-}
                form="register_budget<TAB>KERNEL<TAB>N<TAB>why"
            fi
            if [ -z "$kernel_re" ] || ! is_count "$budget"; then
                bad "$where: malformed rule ($form): $line"
                continue
            fi
            matched=$(select_kernels "$kernel_re")
            if [ -z "$matched" ]; then
                bad "${f[0]} /$kernel_re/ $budget: no kernel matches ($why)"
                continue
            fi
            over=$(echo "$matched" | awk -F'\t' -v m="$budget" 'NR == FNR { want[$1] = 1; next }
                   ($1 in want) && ($2 == "" || $2 + 0 > m + 0) { print $1 }' - "$work/kernels.tsv")
            n=$(echo "$matched" | wc -l)
            if [ -n "$over" ]; then
                bad "${f[0]} $budget: $(echo "$over" | wc -l) of $n kernels /$kernel_re/ over $budget registers: $why"
                echo "$over" | while read -r k; do
                    echo "       $(echo "$k" | short): $(awk -F'\t' -v k="$k" '$1 == k { print $2 }' "$work/kernels.tsv") registers"
                done | head -12
            else
                ok "${f[0]} $budget: $n kernels /$kernel_re/ within $budget registers: $why"
            fi
            ;;
        ptx | sass | ptx_absent | sass_absent)
            if [ ${#f[@]} -lt 4 ]; then
                bad "$where: malformed rule (${f[0]}<TAB>KERNEL<TAB>PATTERN<TAB>why): $line"
                continue
            fi
            kind=${f[0]%_absent}
            absent=0
            [ "$kind" != "${f[0]}" ] && absent=1
            instruction_rule "$kind" "$absent" "${f[1]}" "${f[2]}" "${f[3]}"
            ;;
        ptx_tu | sass_tu)
            if [ ${#f[@]} -lt 3 ]; then
                bad "$where: malformed rule (${f[0]}<TAB>PATTERN<TAB>why): $line"
                continue
            fi
            if ! valid_regex "${f[1]}"; then
                bad "${f[0]}: /${f[1]}/ is not a valid extended regex (${f[2]})"
                continue
            fi
            if [ "${f[0]}" = ptx_tu ]; then
                count=$(grep -cE -- "${f[1]}" "$ptx")
            else
                count=$(cat "$work"/sass/* | grep -cE -- "${f[1]}")
            fi
            if [ "$count" -gt 0 ]; then
                ok "${f[0]}: $count x /${f[1]}/: ${f[2]}"
            else
                bad "${f[0]}: /${f[1]}/ nowhere in the TU: ${f[2]}"
            fi
            ;;
        ptxas_absent)
            if [ ${#f[@]} -lt 3 ]; then
                bad "$where: malformed rule (ptxas_absent<TAB>PATTERN<TAB>why): $line"
                continue
            fi
            if ! valid_regex "${f[1]}"; then
                bad "ptxas_absent: /${f[1]}/ is not a valid extended regex (${f[2]})"
                continue
            fi
            count=$(grep -cE -- "${f[1]}" "$report")
            if [ "$count" -gt 0 ]; then
                bad "ptxas_absent: $count line$([ "$count" -gt 1 ] && echo s) of the ptxas report match /${f[1]}/: ${f[2]}"
                # the lines, a quoted mangled name shortened (the remarks end with one)
                grep -E -- "${f[1]}" "$report" | head -12 | awk '{
                    out = ""
                    while (match($0, /\047_Z[0-9]+/)) {
                        len = substr($0, RSTART + 3, RLENGTH - 3) + 0
                        out = out substr($0, 1, RSTART) substr($0, RSTART + RLENGTH, len)
                        $0 = substr($0, RSTART + RLENGTH + len); sub(/^[^\047]*/, "")
                    }
                    print "       " out $0 }'
                [ "$count" -gt 12 ] && echo "       ... and $((count - 12)) more"
            else
                ok "ptxas_absent: /${f[1]}/ nowhere in the ptxas report: ${f[2]}"
            fi
            ;;
        *)
            bad "$where: unknown rule '${f[0]}' (see contract_check.sh for the rules): $line"
            ;;
        esac
    done < "$expect"
done
if [ "$rules" -eq 0 ]; then
    bad "no rules in ${expects[*]}"
fi

echo
if [ "$fail" -ne 0 ]; then
    echo "CONTRACT FAILED: $failed_rules checks or rules failed"
    exit 1
fi
echo "contract holds: $n_kernels kernels, $rules rules"
