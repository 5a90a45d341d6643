#!/usr/bin/env bash
# Run each test program (C binaries, or *.py with $PYTHON), echo its output, add up the
# "N passed, M failed" lines and print the total as the last line. A program that crashes or
# exits non-zero without reporting a failure counts as one failure.
set -u
PYTHON=${PYTHON:-python3}
pass=0
fail=0
for t in "$@"; do
    # RUN_WITH: a runner for compiled tests of another architecture (qemu-aarch64)
    if [[ $t == *.py ]]; then cmd=("$PYTHON" "$t"); else cmd=(${RUN_WITH:-} "$t"); fi
    out=$("${cmd[@]}" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    line=$(printf '%s\n' "$out" | grep -Eo '[0-9]+ passed, [0-9]+ failed' | tail -1)
    if [[ -z $line ]]; then
        echo "$t: no result line (exit $rc)"
        fail=$((fail + 1))
        continue
    fi
    p=${line%% passed*}
    f=${line#*passed, }
    f=${f%% failed*}
    if [[ $rc -ne 0 && $f -eq 0 ]]; then
        echo "$t: exit status $rc"
        f=1
    fi
    pass=$((pass + p))
    fail=$((fail + f))
done
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
