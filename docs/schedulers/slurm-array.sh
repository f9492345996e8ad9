#!/bin/bash
# One shard of a needlework dataset per Slurm array task.
#
#   jobid=$(sbatch --parsable docs/schedulers/slurm-array.sh)
#   sbatch --dependency=afterok:$jobid --wrap "gen merge $PARTS/* --out /shared/ruler"
#
# The array's size is the shard count: gen reads SLURM_ARRAY_TASK_ID, less
# SLURM_ARRAY_TASK_MIN and divided by SLURM_ARRAY_TASK_STEP, and SLURM_ARRAY_TASK_COUNT, so
# --array=0-15, 1-16 and 0-150:10 all work; a list with gaps (--array=1,4,9) is refused.
# Task ids run to MaxArraySize-1, so an array holds at most MaxArraySize tasks (1001 by
# default: `scontrol show config | grep MaxArraySize`); for more shards than that,
# SHARDS_PER_TASK=K makes K shards in each task. Rerun a failed task with
# `scontrol requeue <jobid>_<id>` (not `sbatch --array=<id>`, whose one-task array gen
# refuses). A requeued task whose shard is already complete exits 0 at once, its part
# untouched; one killed mid-way leaves a staging folder and its lock, and its rerun cleans
# them up and makes the shard again.
#SBATCH --job-name=needlework-shards
#SBATCH --array=0-15
#SBATCH --cpus-per-task=8
#SBATCH --requeue
set -euo pipefail
GEN=${GEN:-gen}
PARTS=${PARTS:-/shared/ruler-parts}
RECIPE=${RECIPE:-suite ruler --seed 7 --len 4k,32k}
SHARDS_PER_TASK=${SHARDS_PER_TASK:-1}

if [ "$SHARDS_PER_TASK" = 1 ]; then
  # shellcheck disable=SC2086  # RECIPE is a list of arguments
  "$GEN" $RECIPE --num-shards env --shard-index env --out "$PARTS/$SLURM_ARRAY_TASK_ID" -q
else
  # Task t of the array makes shards t*K .. t*K+K-1 of COUNT*K.
  task=$(( (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN) / ${SLURM_ARRAY_TASK_STEP:-1} ))
  shards=$(( SLURM_ARRAY_TASK_COUNT * SHARDS_PER_TASK ))
  for k in $(seq 0 $(( SHARDS_PER_TASK - 1 ))); do
    i=$(( task * SHARDS_PER_TASK + k ))
    # shellcheck disable=SC2086
    "$GEN" $RECIPE --num-shards "$shards" --shard-index "$i" --out "$PARTS/$i" -q
  done
fi
