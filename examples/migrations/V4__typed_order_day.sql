-- ordered_on was text; make it a DATE and sort the table by it. Text -> DATE can fail, so this
-- rewrites history (HEAVY): `alterflow migrate lint --analyze` counts the values that would not
-- convert before anyone approves it.
ALTER TABLE orders MODIFY COLUMN ordered_on DATE, ORDER BY (ordered_on, id)
    PROPERTIES ("expected_version" = "3");
