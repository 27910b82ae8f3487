// Package paste checks that the library settings `sweep recommend` prints
// (sim.Policy.Settings) paste: its tests take the grpc-go service config
// and the aws-sdk-go-v2 retryer out of the printed text, build them with
// the real modules, and check that they parse and carry the policy's
// numbers, measured through the libraries' own retry code. The package
// has no code of its own: sim is a leaf and may not import the libraries.
package paste
