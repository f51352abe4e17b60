-- "note" was always the customer's comment; say so. Files match columns by id: nothing is rewritten.
ALTER TABLE orders RENAME COLUMN note TO customer_comment;
ALTER TABLE customers MODIFY COLUMN name VARCHAR(128) NOT NULL;
