#!/usr/bin/env bash
# Model-checks leasehold's election (model/leasehold.pml) with SPIN; see model/README.md.
# The real model (the code as it is, with the fixes of the three findings) must have no
# counterexample in any configuration; each of the seven election mutants, each "old" run (a
# finding's fix undone, FIXn=0) and each of the four observe-mode mutants (8-11: the observer of
# src/election/observer.cpp beside client-go managers) must have one, printed as a readable trace.
# MODEL_JOBS (default 2) runs that many checks at once. MODEL_FULL=1 adds clock-rate drift to
# n2-stale (15.6 M states, about 145 s and 3 GB instead of 5.8 M) and to n2-observe (19.8 M states,
# about 290 s and 4.2 GB instead of 4.5 M). MODEL_ONLY=REGEX runs only the checks whose name
# matches (grep -E), e.g. MODEL_ONLY=interval, or MODEL_ONLY='observe\b' for observe mode's.
# Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
here=$PWD
start=$SECONDS

if ! command -v spin >/dev/null 2>&1; then
  echo "model: installing spin"
  sudo=""
  [[ $(id -u) != 0 ]] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq spin >/dev/null
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/leasehold-model.XXXXXX")
trap 'rm -rf "$work"' EXIT
jobs=${MODEL_JOBS:-2}
full_drifts="-DDRIFTS=0"
[[ ${MODEL_FULL:-0} == 1 ]] && full_drifts=""
# observe mode: 2 client-go managers (lease 3 s / renew 1 s / retry 0.5 s) and pod A's observer
# (--lease-duration 3 s, --renew-deadline 1 s, --retry-period 1 s); model/README.md
observe="-DN=2 -DOBSERVE -DLD=6 -DORP=2 -DPAUSES=0 -DERRS=0 -DSTOPS=0 -DACKS=0 -DWATCH=0"

# name|expect (pass: no counterexample; cex: one required)|search|spin flags
checks=(
  "real n2-core: 2 leasehold, pauses, crashes|pass|exhaustive|-DN=2 -DSTOPS=0 -DACKS=0"
  "real n2-stale: 2 leasehold, watch events older than a Get|pass|exhaustive|-DN=2 -DSTALE $full_drifts -DPAUSES=0 -DCRASHES=0 -DSTOPS=0 -DACKS=0"
  "real n2-shutdown: 2 leasehold, SIGTERM safe/immediate, POST /release|pass|exhaustive|-DN=2 -DPAUSES=0 -DCRASHES=0 -DERRS=0"
  "real n2-gopeer: leasehold + client-go, lease 3s/renew 1s, pauses|pass|exhaustive|-DN=2 -DGOPEER -DLD=6 -DCRASHES=0 -DSTOPS=0 -DACKS=0 -DWATCH=0 -DERRS=0"
  "real n2-gopeer-rd2: leasehold + client-go, lease 3s/renew 2s (2 x renew-deadline > lease-duration)|pass|exhaustive|-DN=2 -DGOPEER -DLD=6 -DRD=4 -DDRIFTS=0 -DCRASHES=0 -DSTOPS=0 -DACKS=0 -DWATCH=0"
  "real n2-interval: renew-interval 1.5 s, longer than renew-deadline (1 s): safe even so|pass|exhaustive|-DN=2 -DRI=3 -DSTOPS=0 -DACKS=0"
  "real n2-interval-cut: lease 3.5 s/renew 2.5 s, renew-interval 1 s, a hung renew cut|pass|exhaustive|-DN=2 -DLD=7 -DRD=5 -DRI=2 -DROOM=1 -DDRIFTS=0 -DSTOPS=0 -DACKS=0 -DWATCH=0"
  "real n3: 3 leasehold, crashes|pass|bitstate|-DN=3 -DPAUSES=0 -DSTOPS=0 -DACKS=0 -DWATCH=0 -DERRS=0 -DDRIFTS=0"
  "real n2-observe: an observer beside 2 client-go managers, crashes|pass|exhaustive|$observe -DOPAUSES=0 $full_drifts"
  "old 1: finding 1 unfixed (stale observed holder after a late answer)|cex|find|-DN=2 -DFIX1=0 -DSTOPS=0 -DACKS=0"
  "old 2: finding 2 unfixed (renewTime stamped at the attempt's start), lease 3s/renew 2s|cex|find|-DN=2 -DGOPEER -DLD=6 -DRD=4 -DDRIFTS=0 -DFIX2=0 -DCRASHES=0 -DSTOPS=0 -DACKS=0 -DWATCH=0"
  "old 3: finding 3 unfixed (a stale watch event naming us is taken)|cex|find|-DN=2 -DSTALE -DDRIFTS=0 -DFIX3=0 -DPAUSES=0 -DCRASHES=0 -DSTOPS=0 -DACKS=0"
  "mutant 1: yes from the last observed state, no question-time rule|cex|find|-DMUTANT=1 -DSTOPS=0 -DACKS=0"
  "mutant 2: observed time taken when the read starts|cex|find|-DMUTANT=2 -DSTOPS=0 -DACKS=0"
  "mutant 3: expiry from renewTime against the local wall clock|cex|find|-DMUTANT=3 -DSTOPS=0 -DACKS=0"
  "mutant 4: safe release before the last validUntil|cex|find|-DMUTANT=4 -DPAUSES=0 -DCRASHES=0"
  "mutant 5: yes window = lease-duration|cex|find|-DMUTANT=5 -DSTOPS=0 -DACKS=0"
  "mutant 6: unconditional writes|cex|find|-DMUTANT=6 -DSTOPS=0 -DACKS=0"
  "mutant 7: clock-rate drift beyond the margin|cex|find|-DMUTANT=7 -DSTOPS=0 -DACKS=0"
  "mutant 8: observe, S = the older Get's answer, not its send|cex|find|$observe -DMUTANT=8 -DDRIFTS=0"
  "mutant 9: observe, S = the send of the Get that read the new version|cex|find|$observe -DMUTANT=9 -DDRIFTS=0"
  "mutant 10: observe, the yes runs the record's lease duration after S|cex|find|$observe -DMUTANT=10 -DOPAUSES=0"
  "mutant 11: observe, no 2 s margin: observer at 5 s/3 s beside 3 s managers|cex|find|$observe -DMUTANT=11 -DOLD=10 -DORD=6 -DOPAUSES=0"
)

# One check in its own directory: verdict in $dir/result, report in $dir/report.
run_check() {
  local i=$1 spec=$2
  local name expect search flags
  IFS='|' read -r name expect search flags <<<"$spec"
  local dir=$work/$i t0=$SECONDS
  mkdir -p "$dir" && cd "$dir"
  cp "$here/leasehold.pml" .
  # shellcheck disable=SC2086
  spin $flags -a leasehold.pml >spin.log 2>&1 || { echo "FAIL" >result; cat spin.log >report; return; }
  local cflags="-w -DSAFETY -DNOREDUCE -DMEMLIM=6000"
  local runs=("-m10000000")
  case $search in
    exhaustive) cflags+=" -O2 -DCOLLAPSE" ;;
    bitstate) cflags+=" -O2 -DBITSTATE"; runs=("-m10000000 -w29") ;;  # 2^29 bits: 64 MB
    find) cflags+=" -O0"; runs=("-m2000" "-m6000" "-m10000000") ;;  # short counterexamples first
  esac
  # shellcheck disable=SC2086
  gcc $cflags -o pan pan.c >gcc.log 2>&1 || { echo "FAIL" >result; cat gcc.log >report; return; }
  local errors=0 r
  for r in "${runs[@]}"; do
    rm -f leasehold.pml.trail
    # shellcheck disable=SC2086
    ./pan $r -c1 -E >pan.log 2>&1 || true
    errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log | tail -1)
    [[ -z $errors ]] && errors=-1
    [[ $errors != 0 ]] && break
  done
  local states factor elapsed
  states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.log | tail -1)
  factor=$(sed -n 's/.*hash factor: \([0-9.e+]*\).*/\1/p' pan.log | tail -1)
  elapsed=$((SECONDS - t0))
  local verdict=FAIL why
  if [[ $errors == -1 ]]; then
    why="pan did not finish: $(tail -3 pan.log | tr '\n' ' ')"
  elif [[ $expect == pass && $errors == 0 ]]; then
    verdict=PASS why="no counterexample"
  elif [[ $expect == cex && $errors != 0 ]]; then
    verdict=PASS why="counterexample found, as required"
  elif [[ $expect == pass ]]; then
    why="COUNTEREXAMPLE in the real model"
  else
    why="no counterexample: the model cannot tell this mistake from the code"
  fi
  {
    echo "$verdict  $name"
    echo "      $why; $states states stored${factor:+, hash factor $factor}; ${elapsed}s"
    echo "      spin flags: $flags ($search)"
    if [[ -f leasehold.pml.trail ]]; then
      echo "      trace (t = real time in ticks of 500 ms):"
      # shellcheck disable=SC2086
      spin -t $flags leasehold.pml 2>/dev/null | grep -E '^ *t=[0-9]+ ' | sed 's/^ */        /' | tail -40
    fi
  } >report
  echo "$verdict" >result
}

if [[ -n ${MODEL_ONLY:-} ]]; then
  picked=()
  for c in "${checks[@]}"; do
    if grep -qE -- "$MODEL_ONLY" <<<"${c%%|*}"; then picked+=("$c"); fi
  done
  checks=("${picked[@]}")
fi

pids=()
for i in "${!checks[@]}"; do
  run_check "$i" "${checks[$i]}" &
  pids+=($!)
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
done
wait || true

passed=0 failed=0
for i in "${!checks[@]}"; do
  cat "$work/$i/report"
  if [[ $(cat "$work/$i/result" 2>/dev/null) == PASS ]]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
echo "model: checked in $((SECONDS - start))s"
echo "model: $passed passed, $failed failed"
((failed == 0))
