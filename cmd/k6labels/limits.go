package main

import (
	"github.com/k6labels/k6labels/cmd/k6labels/internal/bounded"
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
	"github.com/k6labels/k6labels/cmd/k6labels/pprofread"
)

// limits bound what the command reads of each input, once decompressed.
type limits struct {
	maxProfile bounded.Size
	maxK6      bounded.Size
}

// profileURLMargin is added to a profile URL's seconds for its timeout
// (pprofread.DefaultURLMargin; tests shorten it).
var profileURLMargin = pprofread.DefaultURLMargin

// limitFlags adds the flags of c.limits.
func (c *common) limitFlags() {
	c.maxProfile = pprofread.DefaultMaxProfileBytes
	c.maxK6 = k6results.DefaultMaxBytes
	c.fs.Var(&c.maxProfile, "max-profile-bytes", "refuse a pprof profile larger than `size` once decompressed (such as 512MiB)")
	c.fs.Var(&c.maxK6, "max-k6-bytes", "refuse k6 results larger than `size` once decompressed (such as 64GiB)")
}

// readOptions are how c reads a profile.
func (c *common) readOptions() pprofread.ReadOptions {
	return pprofread.ReadOptions{MaxBytes: int64(c.maxProfile), URLMargin: profileURLMargin}
}
