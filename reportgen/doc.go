// Package reportgen is under construction.
package reportgen
