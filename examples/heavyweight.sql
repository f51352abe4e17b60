-- alterflow demo, part 2: a heavyweight change rewrites history while loads keep landing.
CREATE TABLE events (
    id BIGINT NOT NULL,
    code VARCHAR(8),
    day STRING,
    PRIMARY KEY (id)
) DISTRIBUTED BY HASH(id) BUCKETS 4;
INSERT INTO events VALUES (1, '10', '2024-01-01'), (2, ' 20', '240102'), (3, '30', '2024/01/03');

-- text -> numbers and dates can fail, so they need a rewrite into a shadow index
EXPLAIN ALTER TABLE events MODIFY COLUMN code INT, MODIFY COLUMN day DATE, ORDER BY (day, id);

-- postpone_swap: convert and validate now, swap when we say so; loads dual-write meanwhile
ALTER TABLE events MODIFY COLUMN code INT, MODIFY COLUMN day DATE, ORDER BY (day, id)
    PROPERTIES ("postpone_swap" = "true");
SHOW ALTER TABLE COLUMN FROM events;

-- this load lands during the job: written to the origin (old types) and, converted, to the shadow
INSERT INTO events VALUES (4, '40', '20240104'), (2, '21', '2024-01-02');
SELECT * FROM events ORDER BY id;   -- readers still see the origin: strings

RESUME ALTER TABLE COLUMN FROM events;
SELECT * FROM events ORDER BY id;   -- the new version: numbers and dates, nothing lost or doubled
DESCRIBE events;
SHOW ALTER TABLE COLUMN FROM events;
