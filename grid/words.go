package grid

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// KeyWords says a sim.FieldError in the config's words: the key of the
// Param whose Field it names, the value as the file writes it (seconds for
// a _s key), and sim's want with every field name replaced by its key.
// A fleet's fields (Share, Groups) are the mix key's.
func KeyWords(fe *sim.FieldError) (key, msg string) {
	key, v := fe.Field.String(), fe.Value
	if p := paramByField(fe.Field); p != nil {
		key = p.Key
		if d, ok := v.(time.Duration); ok {
			if strings.HasSuffix(key, "_ms") {
				v = d.Milliseconds()
			} else {
				v = strconv.FormatFloat(d.Seconds(), 'g', -1, 64)
			}
		}
	} else if fe.Field == sim.FieldShare || fe.Field == sim.FieldGroups {
		key = "mix"
	}
	if v == "" { // a missing word: say so, not "key: : want"
		v = `""`
	}
	if s, ok := v.(string); ok && len([]rune(s)) > maxShown { // a curve of 1,441 numbers: its start, not all of it
		v = fmt.Sprintf("%s… (%d characters)", string([]rune(s)[:maxShown-20]), len([]rune(s)))
	}
	return key, fmt.Sprintf("%v: want %s", v, fieldNames.ReplaceAllStringFunc(fe.Want, func(f string) string {
		for i := range Params { // a field's name in sim's words: its Field's
			if Params[i].Field.String() == f {
				return Params[i].Key
			}
		}
		return f
	}))
}

// maxShown is the longest string value an error message repeats whole.
const maxShown = 80

// fieldNames matches the sim field names of Params, as whole words.
var fieldNames = func() *regexp.Regexp {
	var fs []string
	for _, p := range Params {
		fs = append(fs, regexp.QuoteMeta(p.Field.String()))
	}
	return regexp.MustCompile(`\b(` + strings.Join(fs, "|") + `)\b`)
}()
