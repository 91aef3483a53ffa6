// Package config turns command-line flags and BORIS_* environment variables into one
// validated, immutable [Config].
package config

//go:generate go test -run ^TestReadmeFlagTable$ -update .
