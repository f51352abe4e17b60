-- The shop's first tables: customers and their orders, with a little data to start from.
CREATE TABLE customers (
    id BIGINT NOT NULL,
    name VARCHAR(64) NOT NULL,
    country VARCHAR(2),
    PRIMARY KEY (id)
) DISTRIBUTED BY HASH(id) BUCKETS 2;

CREATE TABLE orders (
    id BIGINT NOT NULL,
    customer_id BIGINT NOT NULL,
    amount INT,
    ordered_on VARCHAR(10),
    note VARCHAR(40),
    PRIMARY KEY (id)
) DISTRIBUTED BY HASH(id) BUCKETS 4;

INSERT INTO customers VALUES (1, 'Ada', 'GB'), (2, 'Grace', 'US'), (3, 'Edsger', 'NL');
INSERT INTO orders VALUES
    (100, 1, 1200, '2024-03-01', 'gift wrap'),
    (101, 2, 80, '2024-03-02', NULL),
    (102, 1, 430, '2024-03-05', 'express'),
    (103, 3, 99, '2024-03-07', NULL);
