package experiments

import (
	"strings"
	"testing"
)

// A queueing server without its service distribution is refused at the
// sweep's key with the empty value shown as "" and what is accepted, not
// as "sweep.q.service: : want one of …".
func TestMissingServiceSaysWhatIsWanted(t *testing.T) {
	t.Parallel()
	src := "[sweep.q]\nconcurrency = 4\nservice_s = 0.02\ntimeout_s = 0.5\narrival_rps = 100\npolicy = \"decorrelated\"\n"
	_, err := Load("q.toml", []byte(src))
	if err == nil {
		t.Fatal("a queueing server without a service distribution was accepted")
	}
	const want = `sweep.q.service: "": want one of fixed, exponential, lognormal: a queueing server (concurrency > 0) needs its service time distribution`
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error:\n%v\nwant it to contain\n%s", err, want)
	}
}

// A value refused as it is read (0.0001 s is not whole milliseconds) is
// reported once, at its key: the cell then built with the default (0)
// does not add "service_s: 0: want … ≥ 1ms", which the user never wrote.
func TestRefusedValueIsReportedOnce(t *testing.T) {
	t.Parallel()
	src := "[sweep.q]\nseeds = [1]\nconcurrency = 2\nservice = \"exponential\"\nservice_s = 0.0001\npolicy = \"decorrelated\"\n"
	_, err := Load("q.toml", []byte(src))
	if err == nil {
		t.Fatal("service_s = 0.0001 was accepted")
	}
	if n := strings.Count(err.Error(), "sweep.q.service_s"); n != 1 || !strings.Contains(err.Error(), "sweep.q.service_s: 0.0001: want a number of seconds in whole milliseconds") {
		t.Errorf("%d errors at sweep.q.service_s:\n%v\nwant one, about 0.0001", n, err)
	}
}

// The same in [defaults]: one error at defaults.service_s, none at the
// sweep that took its default.
func TestRefusedDefaultIsReportedOnce(t *testing.T) {
	t.Parallel()
	src := "[defaults]\nservice_s = 0.0001\n[sweep.q]\nseeds = [1]\nconcurrency = 2\nservice = \"exponential\"\npolicy = \"decorrelated\"\n"
	_, err := Load("q.toml", []byte(src))
	if err == nil || strings.Count(err.Error(), "service_s") != 1 || !strings.Contains(err.Error(), "defaults.service_s: 0.0001") {
		t.Errorf("error:\n%v\nwant one, at defaults.service_s", err)
	}
}
