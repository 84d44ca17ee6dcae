-- awkward.sql -- a database that is hard to dump and reload faithfully;
-- tests/pgload/test_differential.sh dumps it with pg_dump -Fp and reloads it
-- through psql and pgload.
SET standard_conforming_strings = on;

CREATE DOMAIN positive AS integer CHECK (VALUE > 0);

CREATE TABLE "My Table" (
    id serial PRIMARY KEY,
    "col with spaces" text,
    "semi;colon" text DEFAULT 'a;b',
    e text DEFAULT E'back\\slash\ttab',
    n positive,
    doubled integer GENERATED ALWAYS AS (n * 2) STORED
);

CREATE TABLE texts (
    id integer PRIMARY KEY,
    t text,
    b bytea,
    j jsonb,
    a text[],
    ts timestamptz,
    num numeric
);

CREATE TABLE parent (id integer PRIMARY KEY, name text UNIQUE);
CREATE TABLE child (
    id integer PRIMARY KEY,
    parent_id integer REFERENCES parent (id),
    note text
);

INSERT INTO "My Table" ("col with spaces", n) VALUES
    ('plain', 1), (E'tab\there', 2), (E'new\nline', 3), (E'back\\slash', 4),
    ('quote''s', 5), ('"double"', 6), ('', 7), (NULL, 8), ('日本語 ünïcödé 🙂', 9),
    (E'\\.', 10), ('\.', 11), (E'\\N', 12), ('$$dollar$$', 13), ('-- not a comment', 14),
    ('/* nor this */', 15), (E'cr\rlf\r\n', 16);

INSERT INTO texts
SELECT i,
       CASE i % 7
           WHEN 0 THEN NULL
           WHEN 1 THEN ''
           WHEN 2 THEN E'line1\nline2\ttabbed\\back'
           WHEN 3 THEN 'it''s "quoted"; really'
           WHEN 4 THEN repeat('ü€', i)
           WHEN 5 THEN E'\\.'
           ELSE 'row ' || i
       END,
       CASE WHEN i % 5 = 0 THEN NULL ELSE decode(md5(i::text), 'hex') END,
       jsonb_build_object('i', i, 's', E'a"b\\c\nd', 'arr', jsonb_build_array(i, 'x', NULL)),
       ARRAY['a', NULL, E'b\tc', '"q"', 'd,e'],
       timestamptz '2020-01-01 00:00:00+00' + i * interval '1 hour 7 seconds',
       (i * 1234.5678)::numeric / 7
FROM generate_series(1, 2000) AS i;

-- large values, stored out of line (TOASTed), compressible and not
INSERT INTO texts (id, t) VALUES (100001, repeat('large value; with semicolons ', 40000));
INSERT INTO texts (id, t, b)
SELECT 100002, string_agg(md5(i::text), E'\t'), decode(string_agg(md5(i::text), ''), 'hex')
FROM generate_series(1, 30000) AS i;

INSERT INTO parent SELECT i, 'parent ' || i FROM generate_series(1, 100) AS i;
INSERT INTO child SELECT i, 1 + i % 100, E'note\\' || i FROM generate_series(1, 1000) AS i;

CREATE FUNCTION plpgsql_fn(x integer) RETURNS text
LANGUAGE plpgsql AS $body$
DECLARE
    s text := 'semi;colon $$ and $x$';
BEGIN
    -- a comment; with a semicolon
    IF x > 0 THEN
        RETURN s || $q$;'$q$;
    END IF;
    RETURN E'\\';
END;
$body$;

CREATE FUNCTION atomic_fn(x integer) RETURNS integer
LANGUAGE sql
BEGIN ATOMIC
    SELECT CASE WHEN x > 0 THEN x ELSE -x END;
END;

CREATE FUNCTION trg_fn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.note := coalesce(NEW.note, '') || ';';
    RETURN NEW;
END;
$$;
CREATE TRIGGER child_trg BEFORE UPDATE ON child FOR EACH ROW EXECUTE FUNCTION trg_fn();

CREATE VIEW v AS SELECT id, "col with spaces" AS "c;s" FROM "My Table" WHERE "semi;colon" <> ';';
CREATE INDEX texts_j_idx ON texts USING gin (j);
CREATE INDEX texts_ts_brin ON texts USING brin (ts);
CREATE SEQUENCE s START 42;
SELECT setval('s', 4242);
COMMENT ON TABLE texts IS 'a comment; with ''quotes'' and $$dollars$$';
