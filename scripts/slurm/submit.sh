#!/usr/bin/env bash
# Grades one directory on a Slurm cluster: a job array of N `kernrl grade-dir --shard I/N` tasks and
# a dependent job that merges their traces into one report (docs/grade-dir.md, "On a Slurm cluster").
#
#   scripts/slurm/submit.sh --shards 8 --out runs/model-a DIR [-- grade-dir options]
#   scripts/slurm/submit.sh --shards 8 --out runs/model-a --resubmit 3,5 DIR [-- grade-dir options]
#
# DIR and --out must be on a file system every node sees. Prints the two job ids.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

usage() {
  cat <<USAGE
usage: $0 --out OUT [--shards N] [--gpus-per-shard G] [--kernrl PATH] [--resubmit I,J,...]
          [--sbatch-option OPT]... [--report-option OPT]... [--parsable] DIR [-- grade-dir options]

  --out OUT            output folder: traces/ (one trace per shard), done/, logs/, report.{md,json,html}
  --shards N           number of array tasks, each grading 1/N of DIR (default 4)
  --gpus-per-shard G   GPUs each task asks for (--gres=gpu:G; default 1, 0 for --compile-only)
  --kernrl PATH        the kernrl binary the nodes run (default: kernrl on PATH, else this checkout's
                       build/kernrl)
  --resubmit LIST      submit only these shards again (e.g. 3,5 or 2-4), then the report
  --sbatch-option OPT  passed to sbatch for both jobs, e.g. --sbatch-option=--partition=gpu
  --report-option OPT  passed to kernrl report, e.g. --report-option=--by=level
  --parsable           print only "ARRAY_JOB_ID REPORT_JOB_ID"

Every shard gets the same --seed (kept in OUT/seed) unless the grade-dir options give one.
USAGE
}

shards=4 gpus=1 out="" kernrl="" resubmit="" parsable=0 dir=""
sbatch_opts=() report_opts=() grade_opts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --out=*) out=${1#*=}; shift ;;
    --shards) shards=$2; shift 2 ;;
    --shards=*) shards=${1#*=}; shift ;;
    --gpus-per-shard) gpus=$2; shift 2 ;;
    --gpus-per-shard=*) gpus=${1#*=}; shift ;;
    --kernrl) kernrl=$2; shift 2 ;;
    --kernrl=*) kernrl=${1#*=}; shift ;;
    --resubmit) resubmit=$2; shift 2 ;;
    --resubmit=*) resubmit=${1#*=}; shift ;;
    --sbatch-option) sbatch_opts+=("$2"); shift 2 ;;
    --sbatch-option=*) sbatch_opts+=("${1#*=}"); shift ;;
    --report-option) report_opts+=("$2"); shift 2 ;;
    --report-option=*) report_opts+=("${1#*=}"); shift ;;
    --parsable) parsable=1; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; grade_opts=("$@"); break ;;
    -*) echo "submit.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) [ -z "$dir" ] || { echo "submit.sh: one DIR only" >&2; exit 2; }; dir=$1; shift ;;
  esac
done
[ -n "$dir" ] && [ -n "$out" ] || { usage >&2; exit 2; }
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: --shards must be a positive number" >&2; exit 2; }
[[ "$gpus" =~ ^[0-9]+$ ]] || { echo "submit.sh: --gpus-per-shard must be a number" >&2; exit 2; }
[ -d "$dir" ] || { echo "submit.sh: $dir is not a directory" >&2; exit 2; }
command -v sbatch >/dev/null || { echo "submit.sh: sbatch not found (Slurm's client tools)" >&2; exit 2; }

if [ -z "$kernrl" ]; then
  kernrl=$(command -v kernrl || true)
  [ -n "$kernrl" ] || kernrl="$here/../../build/kernrl"
fi
[ -x "$kernrl" ] || { echo "submit.sh: $kernrl is not an executable kernrl (--kernrl)" >&2; exit 2; }
kernrl=$(realpath "$kernrl")
dir=$(realpath "$dir")
mkdir -p "$out/logs" "$out/traces" "$out/done"
out=$(realpath "$out")

# One run seed for every shard and every resubmission, so that the run is one run.
if ! printf '%s\n' "${grade_opts[@]+"${grade_opts[@]}"}" | grep -q -- '^--seed'; then
  [ -s "$out/seed" ] || od -An -N8 -tu8 /dev/urandom | tr -d ' \n' > "$out/seed"
  grade_opts+=(--seed "$(cat "$out/seed")")
fi

array="0-$((shards - 1))"
[ -z "$resubmit" ] || array=$resubmit
gres=()
[ "$gpus" -eq 0 ] || gres=(--gres="gpu:$gpus")

array_job=$(sbatch --parsable --array="$array" "${gres[@]+"${gres[@]}"}" \
  --output="$out/logs/grade-%A_%a.log" --export="ALL,KERNRL=$kernrl,KERNRL_SHARDS=$shards" \
  "${sbatch_opts[@]+"${sbatch_opts[@]}"}" \
  "$here/grade-dir.sbatch" "$dir" "$out" "${grade_opts[@]+"${grade_opts[@]}"}")
array_job=${array_job%%;*}
report_job=$(sbatch --parsable --dependency="afterany:$array_job" --output="$out/logs/report-%j.log" \
  --export="ALL,KERNRL=$kernrl" "${sbatch_opts[@]+"${sbatch_opts[@]}"}" \
  "$here/report.sbatch" "$out" "$shards" "${report_opts[@]+"${report_opts[@]}"}")
report_job=${report_job%%;*}

if [ "$parsable" = 1 ]; then
  echo "$array_job $report_job"
else
  echo "submitted: array job $array_job (shards $array of $shards), report job $report_job after it"
  echo "  watch:   squeue -j $array_job,$report_job"
  echo "  traces:  $out/traces/   logs: $out/logs/   report: $out/report.{md,json,html}"
fi
