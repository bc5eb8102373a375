package main

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v5"

	"github.com/k6labels/k6labels/examples/internal/servetest"
)

func TestLabels(t *testing.T) {
	base := servetest.Start(t, newEcho())
	servetest.CheckLabels(t, base+"/bike/42")
}

func TestProfile(t *testing.T) {
	e := newEcho()
	e.GET("/spin", echo.WrapHandler(http.HandlerFunc(servetest.Spin)))
	servetest.CheckProfile(t, servetest.Start(t, e)+"/spin")
}
