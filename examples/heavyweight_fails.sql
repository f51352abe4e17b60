-- alterflow demo, part 3: a rewrite that fails validation is cancelled; the table stays as it was.
INSERT INTO events VALUES (5, 300, '2024-01-05');
ALTER TABLE events MODIFY COLUMN code TINYINT;   -- 300 does not fit a TINYINT
