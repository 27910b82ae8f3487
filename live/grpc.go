package live

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// GRPCClient is a driver's gRPC side: the service config its channel is
// made with. Its clients call grpc.health.v1.Health/Check on the live
// server, which answers as the HTTP one does: OK when served, UNAVAILABLE
// while down, RESOURCE_EXHAUSTED after.
type GRPCClient struct {
	ServiceConfig string
}

// grpcRetryConfig is a retry policy as a service config gives it (gRFC A6),
// with the numbers of go-retryablehttp's curve and no throttling.
const grpcRetryConfig = `{"methodConfig": [{"name": [{"service": "grpc.health.v1.Health"}],
  "retryPolicy": {"maxAttempts": 5, "initialBackoff": "1s", "maxBackoff": "30s", "backoffMultiplier": 2,
    "retryableStatusCodes": ["UNAVAILABLE", "RESOURCE_EXHAUSTED"]}}]}`

type healthFront struct {
	healthpb.UnimplementedHealthServer
	s *server
}

func (h healthFront) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	var id int64 = -1
	if v := md.Get(clientHeader); len(v) == 1 {
		id, _ = strconv.ParseInt(v[0], 10, 32)
	}
	if id < 0 {
		return nil, status.Error(codes.InvalidArgument, "missing "+clientHeader)
	}
	k, served, ok := h.s.admit(ctx, int32(id))
	switch {
	case !ok:
		return nil, status.Error(codes.Unavailable, "the run is over")
	case served:
		return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
	case h.s.rejectStatus(k) == http.StatusServiceUnavailable:
		return nil, status.Error(codes.Unavailable, "down")
	}
	return nil, status.Error(codes.ResourceExhausted, "over capacity")
}

// newGRPCFront serves the health service on the live server's listener.
func newGRPCFront(s *server) (serve func(net.Listener) error, stop func()) {
	gs := grpc.NewServer()
	healthpb.RegisterHealthServer(gs, healthFront{s: s})
	return gs.Serve, func() {
		done := make(chan struct{})
		go func() { gs.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			gs.Stop()
		}
	}
}

// grpcCall is one client on its own channel: one Check, retried by
// grpc-go's own retry code as the service config says.
func grpcCall(cfg GRPCClient) func(ctx context.Context, e Env) error {
	return func(ctx context.Context, e Env) error {
		opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultServiceConfig(cfg.ServiceConfig)}
		if e.dial != nil {
			opts = append(opts, grpc.WithContextDialer(e.dial))
		}
		cc, err := grpc.NewClient("passthrough:///"+e.Addr, opts...)
		if err != nil {
			return err
		}
		defer cc.Close()
		ctx = metadata.AppendToOutgoingContext(ctx, clientHeader, strconv.Itoa(e.Index))
		_, err = healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true))
		return err
	}
}
