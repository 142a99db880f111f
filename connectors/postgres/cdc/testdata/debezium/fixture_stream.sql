-- fixture_stream.sql — run by gen.sh once the snapshot has been read:
-- every change here is a streamed event. Each statement commits on its
-- own unless inside BEGIN ... COMMIT.
\set ON_ERROR_STOP on
SET client_min_messages = warning;

-- Inserts: the snapshot's rows again under new keys, so the streamed
-- (pgoutput text) decoding of every value can be compared with the
-- snapshot (JDBC) decoding of the same value.
INSERT INTO numbers (c_smallint, c_int, c_bigint, c_numeric, c_numeric_free, c_real, c_double, c_money, c_domain)
	SELECT c_smallint, c_int, c_bigint, c_numeric, c_numeric_free, c_real, c_double, c_money, c_domain
	FROM numbers ORDER BY id;
INSERT INTO ids (note) VALUES ('streamed');
INSERT INTO texts SELECT id + 100, c_bool, c_text, c_varchar, c_char, c_bytea, c_uuid, c_json, c_jsonb, c_xml,
	c_bit1, c_bit, c_varbit FROM texts ORDER BY id;
INSERT INTO times SELECT id + 100, c_date, c_time, c_time3, c_timetz, c_timestamp, c_timestamp3, c_timestamptz,
	c_interval FROM times ORDER BY id;
INSERT INTO arrays SELECT id + 100, c_int_arr, c_text_arr, c_numeric_arr, c_varchar_arr, c_uuid_arr, c_date_arr,
	c_mood, c_mood_arr FROM arrays ORDER BY id;
INSERT INTO network SELECT id + 100, c_inet, c_cidr, c_macaddr, c_macaddr8 FROM network ORDER BY id;
INSERT INTO odd_types SELECT id + 100, c_point, c_int4range, c_tstzrange, c_tsvector, c_hstore, c_citext, c_ltree,
	c_pair, c_oid, c_int2d FROM odd_types ORDER BY id;
INSERT INTO defaults (id, d_tstz, d_required) VALUES (101, '2024-05-06 07:08:09+00', 101);
INSERT INTO nopk VALUES (2, 'two');
INSERT INTO nopk_full VALUES (3, 'three');
INSERT INTO docs VALUES (3, 'third', repeat('w', 10000), NULL);

-- Updates with replica identity DEFAULT (no old row), of several types.
UPDATE numbers SET c_int = c_int + 1, c_numeric = 1.23 WHERE id = 1;
UPDATE texts SET c_text = 'changed', c_jsonb = '{"changed": true}' WHERE id = 1;
UPDATE times SET c_timestamptz = '2025-01-01 00:00:00+00' WHERE id = 1;
UPDATE arrays SET c_int_arr = '{9}', c_mood_arr = '{ok}' WHERE id = 1;

-- Primary key changes (single and composite key).
UPDATE inventory.products SET id = 100 WHERE id = 1;
UPDATE order_lines SET line_no = 9 WHERE order_id = 1 AND line_no = 2;

-- Replica identity FULL: the whole old row, with and without a key.
UPDATE full_ident SET qty = qty + 1 WHERE id = 1;
UPDATE full_ident SET id = 3 WHERE id = 2;
DELETE FROM full_ident WHERE id = 1;
UPDATE nopk_full SET b = 'changed' WHERE a = 1;
DELETE FROM nopk_full WHERE a = 2;

-- TOAST: the first update leaves body and blob alone (unchanged TOAST),
-- the second replaces body.
UPDATE docs SET title = 'first, retitled' WHERE id = 1;
UPDATE docs SET body = repeat('y', 10000) WHERE id = 2;

-- Deletes (then tombstones): replica identity DEFAULT gives the old key only.
DELETE FROM numbers WHERE id = 7;
DELETE FROM docs WHERE id = 2;
DELETE FROM inventory."Mixed Case" WHERE "Id" = 1;

-- A multi-statement transaction across tables and schemas.
BEGIN;
INSERT INTO order_lines VALUES (3, 1, 'sku-31', 5);
UPDATE order_lines SET qty = qty * 2 WHERE order_id = 1;
DELETE FROM order_lines WHERE order_id = 2;
INSERT INTO inventory.products VALUES (3, 'drill', 99.00);
COMMIT;

-- A rolled back transaction emits nothing.
BEGIN;
INSERT INTO inventory.products VALUES (4, 'never', 1.00);
ROLLBACK;

TRUNCATE truncate_me;
INSERT INTO truncate_me VALUES (3, 'after truncate');

-- Schema changes, each followed by an insert.
ALTER TABLE evolve ADD COLUMN extra text DEFAULT 'new';
INSERT INTO evolve (id, qty, dropme) VALUES (2, 20, 'still here');
ALTER TABLE evolve DROP COLUMN dropme;
INSERT INTO evolve (id, qty) VALUES (3, 30);
ALTER TABLE evolve ALTER COLUMN qty TYPE bigint;
INSERT INTO evolve (id, qty, extra) VALUES (4, 9000000000, 'big');
UPDATE evolve SET qty = qty + 1 WHERE id = 1;

-- A table created mid-stream.
CREATE TABLE late (id integer PRIMARY KEY, v text NOT NULL DEFAULT 'd', n numeric(4, 1));
INSERT INTO late VALUES (1, 'late', 1.5);
INSERT INTO late (id) VALUES (2);

-- Last: gen.sh waits for this event.
INSERT INTO zz_done VALUES (1);
