#!/bin/bash
# Contract check for one header on one architecture.
# usage: contract_check.sh PTXAS_REPORT PTX EXPECT
#   PTXAS_REPORT  nvcc -Xptxas -v output of the header's contract TU
#   PTX           the PTX of that TU
#   EXPECT        lines "regex<TAB>why" that must match the PTX, "max_registers<TAB>N", and
#                 "register_budget<TAB>kernel regex<TAB>N<TAB>why" (each kernel whose name matches),
#                 "ptx_absent<TAB>kernel regex<TAB>regex<TAB>why" (no line of those kernels' PTX matches)
# Fails if no kernel was compiled, if any function has a stack frame or spills, if a kernel uses
# more than its registers budget, or if a promised instruction is missing.
set -u
report=$1 ptx=$2 expect=$3
fail=0

kernels=$(grep -c "Compiling entry function" "$report")
if [ "$kernels" -lt 1 ]; then
    echo "FAIL: the ptxas report lists no kernel: nothing was checked"
    fail=1
fi
echo "kernels compiled: $kernels"

# Per kernel: name, registers, stack frame, spills (the report lists properties after each entry).
awk '
/Compiling entry function/ { match($0, /'"'"'[^'"'"']+'"'"'/); name = substr($0, RSTART + 1, RLENGTH - 2) }
/bytes stack frame/ { stack = $1; spill_st = $5; spill_ld = $9 }
/Used [0-9]+ registers/ { match($0, /Used [0-9]+ registers/); regs = substr($0, RSTART + 5, RLENGTH - 15);
                          printf "%s\t%s\t%s\t%s\t%s\n", name, regs, stack, spill_st, spill_ld }
' "$report" > kernels.tsv
printf "%-70s %5s %6s %6s %6s\n" kernel regs stack spillS spillL
awk -F'\t' '{ printf "%-70.70s %5s %6s %6s %6s\n", $1, $2, $3, $4, $5 }' kernels.tsv

bad=$(grep "bytes stack frame" "$report" | grep -v "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads")
if [ -n "$bad" ]; then
    echo "FAIL: stack frame or spills (every shipped kernel must have none):"
    echo "$bad"
    fail=1
fi

max_regs=$(awk -F'\t' '$1 == "max_registers" { print $2 }' "$expect")
if [ -n "$max_regs" ]; then
    over=$(awk -F'\t' -v m="$max_regs" '$2 + 0 > m + 0' kernels.tsv)
    if [ -n "$over" ]; then
        echo "FAIL: kernels over the register budget of $max_regs:"
        echo "$over"
        fail=1
    fi
fi

# A per-kernel rule's verdict: MATCHED kernels, OFFENDERS (lines; empty: none), then the messages
# for no kernel matched, for offenders (listed after it) and for a rule that holds.
rule_verdict() {
    if [ "$1" -eq 0 ]; then
        echo "FAIL: $3"
        fail=1
    elif [ -n "$2" ]; then
        echo "FAIL: $4"
        echo "$2"
        fail=1
    else
        echo "ok   $5"
    fi
}

while IFS=$'\t' read -r tag kernel_re budget why; do
    [ "$tag" = register_budget ] || continue
    matched=$(awk -F'\t' -v re="$kernel_re" '$1 ~ re' kernels.tsv | wc -l)
    over=$(awk -F'\t' -v re="$kernel_re" -v m="$budget" '$1 ~ re && $2 + 0 > m + 0' kernels.tsv)
    rule_verdict "$matched" "$over" "no kernel matches /$kernel_re/ (register budget $budget: $why)" \
        "kernels over their budget of $budget registers ($why):" "$matched kernels /$kernel_re/ within $budget registers: $why"
done < "$expect"

while IFS=$'\t' read -r tag kernel_re pattern why; do
    [ "$tag" = ptx_absent ] || continue
    # per kernel whose name matches: the count of its PTX lines that match the pattern
    counts=$(awk -v re="$kernel_re" -v pat="$pattern" '
        /\.entry / { match($0, /\.entry [^(]+/); name = substr($0, RSTART + 7, RLENGTH - 7); keep = name ~ re
                     if (keep) n[name] = 0; next }
        /^\.(visible |weak )?\.func / { keep = 0 }
        keep && $0 ~ pat { n[name]++ }
        END { for (k in n) printf "%s\t%d\n", k, n[k] }' "$ptx")
    matched=$(printf "%s" "$counts" | grep -c .)
    bad=$(printf "%s\n" "$counts" | awk -F'\t' '$2 > 0')
    rule_verdict "$matched" "$bad" "no kernel matches /$kernel_re/ (absent /$pattern/: $why)" \
        "/$pattern/ in kernels /$kernel_re/ ($why):" "$matched kernels /$kernel_re/ without /$pattern/: $why"
done < "$expect"

while IFS=$'\t' read -r pattern why; do
    case "$pattern" in ''|'#'*|max_registers|register_budget|ptx_absent) continue ;; esac
    count=$(grep -cE "$pattern" "$ptx")
    if [ "$count" -gt 0 ]; then
        echo "ok   $count x /$pattern/: $why"
    else
        echo "FAIL missing /$pattern/: $why"
        fail=1
    fi
done < "$expect"

if [ "$fail" -ne 0 ]; then echo "CONTRACT FAILED"; exit 1; fi
echo "contract holds"
