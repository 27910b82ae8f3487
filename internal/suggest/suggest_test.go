package suggest

import "testing"

func TestDidYouMean(t *testing.T) {
	names := []string{"capacity_rps", "clients", "recover_s", "run", "report"}
	for _, tc := range []struct{ in, want string }{
		{"capacity", ` (did you mean "capacity_rps"?)`}, // four edits, but the name without its unit
		{"recover", ` (did you mean "recover_s"?)`},
		{"capac", ""},
		{"capacity_rp", ` (did you mean "capacity_rps"?)`},
		{"clinets", ` (did you mean "clients"?)`},
		{"rn", ` (did you mean "run"?)`},
		{"xy", ""},
		{"", ""},
	} {
		if got := DidYouMean(tc.in, names); got != tc.want {
			t.Errorf("DidYouMean(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if d := EditDistance("kitten", "sitting"); d != 3 {
		t.Errorf("EditDistance(kitten, sitting) = %d, want 3", d)
	}
}
