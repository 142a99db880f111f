// Command fjord is the single Fjord binary: a Kafka-compatible broker, and
// the tools to run and use it. Every subcommand registers itself from its
// own file with addCommand, so main stays small.
package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
)

var rootCmd = &cobra.Command{
	Use:           "fjord",
	Short:         "Fjord: a Kafka-compatible broker, Connect runtime and mirror in one binary",
	SilenceUsage:  true,
	SilenceErrors: true,
	PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
		return setupLogging()
	},
}

var logLevel string

func init() {
	rootCmd.PersistentFlags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
}

// addCommand registers a subcommand; each command file calls it from init.
func addCommand(c *cobra.Command) { rootCmd.AddCommand(c) }

func setupLogging() error {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(logLevel)); err != nil {
		return fmt.Errorf("--log-level %q: want debug, info, warn or error", logLevel)
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})))
	return nil
}

func main() {
	if err := rootCmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "fjord:", err)
		os.Exit(1)
	}
}
