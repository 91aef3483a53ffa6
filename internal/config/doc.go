// Package config turns command-line flags and BORIS_* environment variables into one
// validated, immutable [Config].
package config
