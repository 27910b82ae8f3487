#!/bin/sh
# The nightly gates, run once every shard of a night is done:
#   sweep check    tonight's dataset is whole and readable
#   sweep assert   it holds every assertion of $HERDSWEEP_ASSERT
#   sweep compare  nothing moved by more than $HERDSWEEP_THRESHOLD since the
#                  last night that passed its gates
# When all pass, tonight becomes that night ($HERDSWEEP_DATA/last-good). To
# accept a change a gate refused, write that night's name into last-good.
#
# Exit 0 every gate passed, 1 one failed, 2 bad input (sweep's own codes:
# the highest of them).
#
#   HERDSWEEP_DATA       the shared folder; a night's dataset is nights/$NIGHT
#   NIGHT                tonight's name
#   HERDSWEEP_ASSERT     the assertions file
#   HERDSWEEP_THRESHOLD  sweep compare --threshold (default 5%)
set -u
data=${HERDSWEEP_DATA:?set HERDSWEEP_DATA to the shared folder}
night=${NIGHT:?set NIGHT to the name of the night, its folder under HERDSWEEP_DATA/nights}
assertions=${HERDSWEEP_ASSERT:?set HERDSWEEP_ASSERT to the assertions file}
threshold=${HERDSWEEP_THRESHOLD:-5%}
tonight=$data/nights/$night

status=0
gate() {
	"$@"
	code=$?
	if [ "$code" -gt "$status" ]; then
		status=$code
	fi
}

gate sweep check "$tonight"
gate sweep assert --results "$tonight" "$assertions"
if [ -s "$data/last-good" ]; then
	last=$(cat "$data/last-good")
	gate sweep compare --threshold "$threshold" "$data/nights/$last" "$tonight"
else
	echo "gates: no night has passed its gates yet ($data/last-good): nothing to compare $night with"
fi

if [ "$status" -ne 0 ]; then
	echo "gates: $night failed (exit $status); the last night that passed stays in $data/last-good"
	exit "$status"
fi
printf '%s\n' "$night" >"$data/.last-good.tmp" && mv "$data/.last-good.tmp" "$data/last-good" || exit 1
echo "gates: $night passed; it is now $data/last-good"
