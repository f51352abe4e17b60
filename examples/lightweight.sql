-- alterflow demo: a table changes shape five times without rewriting a single file.
CREATE TABLE orders (
    id BIGINT NOT NULL,
    region VARCHAR(8) NOT NULL,
    qty INT,
    note VARCHAR(20) DEFAULT 'none',
    PRIMARY KEY (id)
) DISTRIBUTED BY HASH(id) BUCKETS 4 ORDER BY (id);

INSERT INTO orders VALUES (1, 'eu', 5, 'first'), (2, 'us', 7, NULL), (3, 'eu', 1, 'gift');
SELECT * FROM orders ORDER BY id;

-- 1. add a column with a default: old rows read 'std' without being rewritten
ALTER TABLE orders ADD COLUMN tier VARCHAR(8) NOT NULL DEFAULT 'std' AFTER region;
INSERT INTO orders (id, region, qty, tier) VALUES (4, 'us', 2, 'gold');

-- 2. drop a column, then 3. add one of the same name: a new column, old values never come back
ALTER TABLE orders DROP COLUMN note;
ALTER TABLE orders ADD COLUMN note VARCHAR(20);

-- 4. rename (free: data files carry column ids, not names)
ALTER TABLE orders RENAME COLUMN qty TO quantity;

-- 5. widen INT -> BIGINT (a cast applied while reading)
EXPLAIN ALTER TABLE orders MODIFY COLUMN quantity BIGINT;
ALTER TABLE orders MODIFY COLUMN quantity BIGINT;

-- an upsert under the newest version: the latest committed transaction wins
INSERT INTO orders VALUES (2, 'us', 'silver', 70000000000, 'upserted');

SELECT * FROM orders ORDER BY id;
DESCRIBE orders;
SHOW SCHEMA VERSIONS FROM orders;
SHOW ALTER TABLE COLUMN FROM orders;

-- a heavyweight change is planned and explained; its executor arrives with the next issue
EXPLAIN ALTER TABLE orders MODIFY COLUMN region INT, ORDER BY (region, id);
