package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

// version is the module version of the build: the tag a go install
// @version build was made from, "(devel)" for a build in a checkout.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Version == "" {
		return "(devel)"
	}
	return bi.Main.Version
}

// runVersion is the version command.
func runVersion(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "k6labels version: unexpected arguments %q\n", args)
		return errUsage
	}
	fmt.Fprintf(stdout, "k6labels %s\n", version())
	return nil
}
