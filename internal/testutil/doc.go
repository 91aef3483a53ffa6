// Package testutil holds helpers that the tests and benchmarks of several packages share.
// Only test files import it.
package testutil
