// Package distribution is under construction.
package distribution
