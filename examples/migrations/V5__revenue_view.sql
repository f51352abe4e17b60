-- Revenue per country, for the finance dashboard. The view pins the columns it reads: a later
-- migration cannot drop or retype them while it exists.
CREATE VIEW revenue_by_country AS
    SELECT c.country, SUM(o.amount) AS revenue, COUNT(*) AS orders
    FROM orders o JOIN customers c ON o.customer_id = c.id
    GROUP BY c.country;
