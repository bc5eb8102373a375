package main

import (
	"testing"

	"github.com/k6labels/k6labels/examples/internal/servetest"
)

func TestLabels(t *testing.T) {
	base := servetest.Start(t, newRouter())
	servetest.CheckLabels(t, base+"/bike/42")
}

func TestProfile(t *testing.T) {
	r := newRouter()
	r.HandleFunc("/spin", servetest.Spin)
	servetest.CheckProfile(t, servetest.Start(t, r)+"/spin")
}
