package live

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

func TestDbgGRPC(t *testing.T) {
	if os.Getenv("DBG") == "" {
		t.Skip()
	}
	d, _ := DriverByName("grpc-go")
	sc := sim.Scenario{Clients: 200, Tick: 450 * time.Millisecond, RecoverAt: time.Second, Capacity: 1200, Horizon: 30 * time.Second}
	for i := 0; i < 12; i++ {
		m, err := Run(context.Background(), Config{Scenario: sc, Driver: d, Down: Down503, Grace: 200 * time.Millisecond, Seed: 1, MaxAttempts: 100})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println(m.Arrivals, m.Server, m.CloseLateMax, m.Served, m.Wall)
	}
}
