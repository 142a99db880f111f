package avro

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RegistryError is an error answer of a schema registry.
type RegistryError struct {
	Status  int
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func (e *RegistryError) Error() string {
	return fmt.Sprintf("%s; error code: %d", e.Message, e.Code)
}

// Client talks to a Confluent-compatible schema registry and caches what
// never changes (schema by id, id of a registered schema), as Confluent's
// CachedSchemaRegistryClient. URLs are tried in turn on connection errors.
type Client struct {
	urls []string
	user string // "user:password" for basic auth, or ""
	http *http.Client

	mu         sync.Mutex
	byID       map[int32]string
	registered map[[2]string]int32 // (subject, schema) → id
	versions   map[[2]string]int32 // (subject, schema) → version
	next       int                 // index of the URL to try first
	maxEntries int
}

// NewClient returns a client for the given registry URLs; userInfo is
// "user:password" for basic auth ("" for none; a URL's own user info is
// used when userInfo is empty).
func NewClient(urls []string, userInfo string, maxEntries int) (*Client, error) {
	if len(urls) == 0 {
		return nil, errors.New("schema.registry.url: at least one URL is required")
	}
	c := &Client{user: userInfo, http: &http.Client{Timeout: 30 * time.Second},
		byID: map[int32]string{}, registered: map[[2]string]int32{}, versions: map[[2]string]int32{}, maxEntries: maxEntries}
	for _, u := range urls {
		pu, err := url.Parse(strings.TrimSpace(u))
		if err != nil || pu.Host == "" {
			return nil, fmt.Errorf("schema.registry.url: invalid URL %q", u)
		}
		if pu.User != nil && c.user == "" {
			p, _ := pu.User.Password()
			c.user = pu.User.Username() + ":" + p
		}
		pu.User = nil
		c.urls = append(c.urls, strings.TrimSuffix(pu.String(), "/"))
	}
	return c, nil
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var data []byte
	if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			return err
		}
	}
	c.mu.Lock()
	start := c.next
	c.mu.Unlock()
	var lastErr error
	for i := range c.urls {
		idx := (start + i) % len(c.urls)
		req, err := http.NewRequestWithContext(ctx, method, c.urls[idx]+path, bytes.NewReader(data))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		req.Header.Set("Accept", "application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json; qs=0.9, application/json; qs=0.5")
		if c.user != "" {
			u, p, _ := strings.Cut(c.user, ":")
			req.SetBasicAuth(u, p)
		}
		resp, err := c.http.Do(req)
		if err != nil {
			lastErr = err
			continue
		}
		raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		resp.Body.Close()
		if err != nil {
			lastErr = err
			continue
		}
		c.mu.Lock()
		c.next = idx
		c.mu.Unlock()
		if resp.StatusCode != http.StatusOK {
			re := &RegistryError{Status: resp.StatusCode}
			if json.Unmarshal(raw, re) != nil || re.Message == "" {
				re.Code, re.Message = resp.StatusCode, strings.TrimSpace(string(raw))
			}
			return re
		}
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("schema registry %s %s: bad answer %q: %w", method, path, raw, err)
		}
		return nil
	}
	return fmt.Errorf("schema registry unreachable at %s: %w", strings.Join(c.urls, ", "), lastErr)
}

func subjectPath(subject string) string { return "/subjects/" + url.PathEscape(subject) }

// cacheFull keeps caches bounded (schemas.cache.config).
func (c *Client) cacheFull(n int) bool { return c.maxEntries > 0 && n >= c.maxEntries }

// Register registers schema under subject and returns its id.
func (c *Client) Register(ctx context.Context, subject, schema string) (int32, error) {
	key := [2]string{subject, schema}
	c.mu.Lock()
	id, ok := c.registered[key]
	c.mu.Unlock()
	if ok {
		return id, nil
	}
	var out struct {
		ID int32 `json:"id"`
	}
	if err := c.do(ctx, "POST", subjectPath(subject)+"/versions", map[string]string{"schema": schema}, &out); err != nil {
		return 0, err
	}
	c.mu.Lock()
	if !c.cacheFull(len(c.registered)) {
		c.registered[key] = out.ID
	}
	if !c.cacheFull(len(c.byID)) {
		c.byID[out.ID] = schema
	}
	c.mu.Unlock()
	return out.ID, nil
}

// registeredSchema is a schema under a subject.
type registeredSchema struct {
	Subject string `json:"subject"`
	Version int32  `json:"version"`
	ID      int32  `json:"id"`
	Schema  string `json:"schema"`
}

// Lookup finds schema under subject (without registering it).
func (c *Client) Lookup(ctx context.Context, subject, schema string) (id, version int32, err error) {
	key := [2]string{subject, schema}
	c.mu.Lock()
	id, okID := c.registered[key]
	version, okV := c.versions[key]
	c.mu.Unlock()
	if okID && okV {
		return id, version, nil
	}
	var out registeredSchema
	if err := c.do(ctx, "POST", subjectPath(subject), map[string]string{"schema": schema}, &out); err != nil {
		return 0, 0, err
	}
	c.mu.Lock()
	if !c.cacheFull(len(c.versions)) {
		c.registered[key], c.versions[key] = out.ID, out.Version
	}
	c.mu.Unlock()
	return out.ID, out.Version, nil
}

// Latest returns the latest version registered under subject (not
// cached: it changes).
func (c *Client) Latest(ctx context.Context, subject string) (registeredSchema, error) {
	var out registeredSchema
	err := c.do(ctx, "GET", subjectPath(subject)+"/versions/latest", nil, &out)
	if err == nil && out.Schema == "" {
		// Confluent answers "string" schemas as the bare JSON string.
		err = fmt.Errorf("schema registry: latest version of %s has an empty schema", subject)
	}
	return out, err
}

// SchemaByID returns the schema text with id.
func (c *Client) SchemaByID(ctx context.Context, id int32) (string, error) {
	c.mu.Lock()
	s, ok := c.byID[id]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	var out struct {
		Schema     string `json:"schema"`
		SchemaType string `json:"schemaType"`
	}
	if err := c.do(ctx, "GET", "/schemas/ids/"+strconv.Itoa(int(id)), nil, &out); err != nil {
		return "", err
	}
	if out.SchemaType != "" && out.SchemaType != "AVRO" {
		return "", fmt.Errorf("schema %d is a %s schema, not Avro", id, out.SchemaType)
	}
	c.mu.Lock()
	if !c.cacheFull(len(c.byID)) {
		c.byID[id] = out.Schema
	}
	c.mu.Unlock()
	return out.Schema, nil
}
