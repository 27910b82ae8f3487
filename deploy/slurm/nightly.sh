#!/bin/bash
# Submits a night to Slurm: the shards as a job array, then the gates
# (../nightly/gates.sh) as a job that starts once every shard has
# succeeded. Run it from cron on a login node, e.g.
#   0 2 * * *  /shared/herdsweep/deploy/slurm/nightly.sh
#
#   SHARDS              the array's size: shard i of SHARDS per task (8)
#   HERDSWEEP_DATA      the shared folder; a night's dataset is nights/$NIGHT
#   HERDSWEEP_CONFIG    the sweeps file (../nightly/sweeps.toml)
#   HERDSWEEP_ASSERT    the assertions file (../nightly/nightly.assert)
#   HERDSWEEP_THRESHOLD sweep compare --threshold (5%)
#   NIGHT               the night's name (its UTC date and time)
# sweep must be on the PATH of the compute nodes.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
shards=${SHARDS:-8}
export HERDSWEEP_DATA=${HERDSWEEP_DATA:-/shared/herdsweep}
export HERDSWEEP_CONFIG=${HERDSWEEP_CONFIG:-$here/../nightly/sweeps.toml}
export HERDSWEEP_ASSERT=${HERDSWEEP_ASSERT:-$here/../nightly/nightly.assert}
export HERDSWEEP_THRESHOLD=${HERDSWEEP_THRESHOLD:-5%}
export NIGHT=${NIGHT:-$(date -u +%Y%m%dT%H%MZ)}
mkdir -p "$HERDSWEEP_DATA/logs"

# Slurm runs a copy of each script: the paths travel in the environment
# (--export=ALL), not beside the script.
array=$(sbatch --parsable --export=ALL --job-name="herdsweep-$NIGHT" \
	--array="0-$((shards - 1))" --output="$HERDSWEEP_DATA/logs/$NIGHT-%a.out" \
	"$here/shard.sbatch")
array=${array%%;*} # --parsable prints JOBID or JOBID;CLUSTER
gates=$(sbatch --parsable --export=ALL --job-name="herdsweep-$NIGHT-gates" \
	--dependency="afterok:$array" --kill-on-invalid-dep=yes \
	--cpus-per-task=1 --mem=2G --time=00:30:00 \
	--output="$HERDSWEEP_DATA/logs/$NIGHT-gates.out" \
	"$here/../nightly/gates.sh")
echo "night $NIGHT: shards in job array $array, gates in job ${gates%%;*} after them"
