#!/usr/bin/env bash
# nppbench over hosts with Slurm: one shard of the matrix per array task (`--shard K/N`), each on
# one GPU, each writing its own run.json. The N shards together are exactly the unsharded run's
# scenarios (by scenario id); merge them once every task has finished:
#
#   nppbench report --from runs/shard-* --out report
#
# Submit with `sbatch docs/shard/slurm.sh` (N is the array's size: change --array and nothing else).
#SBATCH --job-name=nppbench-atlas
#SBATCH --array=1-4
#SBATCH --gpus=1
#SBATCH --time=02:00:00
#SBATCH --output=nppbench-%A-%a.log
set -euo pipefail

N=${SLURM_ARRAY_TASK_COUNT:?run this as a Slurm array job (sbatch --array=1-N)}
K=${SLURM_ARRAY_TASK_ID:?run this as a Slurm array job (sbatch --array=1-N)}

nppbench run --preset atlas --shard "$K/$N" --out "runs/shard-$K"
