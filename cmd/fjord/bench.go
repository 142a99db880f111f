package main

import "github.com/fjordhq/fjord/internal/bench"

// `fjord bench` lives in internal/bench so that its tests can re-execute
// their own binary as the driver and kfake processes.
func init() { addCommand(bench.NewCommand(bench.DefaultSelf(), nil)) }
