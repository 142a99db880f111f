-- Runs once, when the postgres service starts on an empty volume, in the
-- inventory database (POSTGRES_DB).

-- The table the CDC source (deploy/config/connectors/postgres-cdc.json)
-- streams to the topic inv.public.orders.
CREATE TABLE orders (
  id       integer PRIMARY KEY,
  customer text NOT NULL,
  total    numeric(12,2),
  placed   timestamptz NOT NULL DEFAULT now(),
  shipped  boolean NOT NULL DEFAULT false
);
-- Updates and deletes carry the whole old row (by default Postgres logs
-- only the key of a deleted row).
ALTER TABLE orders REPLICA IDENTITY FULL;
INSERT INTO orders (id, customer, total) VALUES
  (1, 'ada', 19.90), (2, 'grace', 250.00), (3, 'linus', 7.25);

-- Where the Postgres sink (postgres-sink.json) writes: a table named
-- after the topic's last part (orders), created by the sink (auto.create).
CREATE DATABASE analytics;
