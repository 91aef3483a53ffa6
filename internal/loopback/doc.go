// Package loopback tells whether a host names this machine's loopback interface.
package loopback
