-- Orders now come from the web shop and the app: remember which (old orders were all web).
ALTER TABLE orders ADD COLUMN channel VARCHAR(8) NOT NULL DEFAULT 'web'
    PROPERTIES ("expected_version" = "1");
