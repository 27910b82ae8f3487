//go:build race

package live

// raceEnabled: the race detector slows everything about tenfold, too much
// for a real-time run to keep its ticks; the live tests then still run
// (so that the detector checks the server and the clients) but only log
// their verdicts.
const raceEnabled = true
