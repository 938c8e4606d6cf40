// Package openai is under construction.
package openai
