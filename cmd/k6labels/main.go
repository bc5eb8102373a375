// Command k6labels reports the CPU that each k6 request cost, from CPU
// profiles labelled by the k6labels middleware and k6's own results.
package main

func main() {}
