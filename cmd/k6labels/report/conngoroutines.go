package report

import (
	"fmt"
)

// ConnectionRow names the row of the CPU of connection goroutines that a
// labelled request started: they keep its labels for as long as they live,
// while the work they do is of every request the connection carries.
const ConnectionRow = "(connection goroutines started in a request)"

// connNote is the note of a report whose profiles hold CPU of connection
// goroutines started in labelled requests.
func connNote(c Count) string {
	return fmt.Sprintf("%s of CPU ran in connection goroutines (net/http, HTTP/2, gRPC or database/sql connection loops) that a labelled request started: they keep its k6 labels for life, but do the work of every request on the connection, so their CPU is counted in the row %s, in no k6 row. "+
		"To label it right, give the clients the service calls while serving k6 requests k6labels.NewTransport (or k6labels.UnlabelledTransport) as their transport", Secs(c.CPU), ConnectionRow)
}
