package main

import (
	"time"

	"github.com/k6labels/k6labels/cmd/k6labels/pyroscope"
	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

func newPyroscopeSource(c *common, start, end time.Time) (*report.PyroscopeSource, error) {
	client, err := pyroscope.NewClient(c.pyroscope, c.hc)
	if err != nil {
		return nil, c.bad("--pyroscope: %v", err)
	}
	return report.NewPyroscopeSource(client, c.pyroscope, c.service, start, end), nil
}
