package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// fjord healthcheck URL is the container health probe: the runtime image
// (distroless) has no shell and no curl, so compose's healthcheck and
// anything else that can only run a command calls the binary itself.
func init() { addCommand(newHealthcheckCmd()) }

func newHealthcheckCmd() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "healthcheck URL",
		Short: "Exit 0 if an HTTP GET of URL answers 2xx (a container health probe)",
		Long: `GET URL once and exit 0 if the answer is 2xx, 1 otherwise (printing the
status and the start of the body). For container health checks where the
image has no curl:

  fjord healthcheck http://127.0.0.1:8080/readyz   # a broker's --http-addr
  fjord healthcheck http://127.0.0.1:8083/health   # a Connect worker's REST API`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return healthcheck(cmd.Context(), args[0], timeout, cmd.OutOrStdout())
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "give up after this long")
	return cmd
}

// healthcheck does one GET. Proxies from the environment are ignored: a
// probe asks this container, not whatever HTTP_PROXY points at.
func healthcheck(ctx context.Context, rawURL string, timeout time.Duration, out io.Writer) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("healthcheck %q: want an http:// or https:// URL, e.g. http://127.0.0.1:8080/readyz", rawURL)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("healthcheck %s: %w", rawURL, err)
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck %s: %w", rawURL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	text := strings.TrimSpace(string(body))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("healthcheck %s: %s: %s", rawURL, resp.Status, text)
	}
	fmt.Fprintf(out, "%s: %s\n", resp.Status, text)
	return nil
}
