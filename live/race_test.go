//go:build race

package live

// raceEnabled: the race detector slows everything about tenfold, which
// may be too much for a real-time run to keep its ticks. The live tests
// still run (so that the detector checks the server and the clients) and
// assert their verdicts whenever a run kept its ticks; a test whose three
// runs all stalled logs its verdicts instead of failing (runLive,
// runPlaced).
const raceEnabled = true
