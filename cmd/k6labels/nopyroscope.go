//go:build !pyroscopeapi

package main

import (
	"context"
	"errors"
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

type stubSource struct{ report.Source }

func (stubSource) Runs(context.Context) ([]report.Run, error) { return nil, errors.New("no pyroscope") }
func (stubSource) String() string                             { return "" }

func newPyroscopeSource(*common, time.Time, time.Time) (*stubSource, error) {
	return nil, errors.New("pyroscope client not built yet")
}
