-- The workload behind data/sample/mariadb-bin.000001 (MariaDB 10.11, binlog_format=ROW,
-- binlog_row_metadata=FULL, binlog_row_image=FULL, binlog_checksum=CRC32).
CREATE DATABASE shop;
USE shop;
CREATE TABLE customers (
  id INT UNSIGNED NOT NULL PRIMARY KEY,
  name VARCHAR(100) CHARACTER SET utf8mb4 NOT NULL,
  country CHAR(2) CHARACTER SET ascii NOT NULL
);
CREATE TABLE orders (
  id BIGINT UNSIGNED NOT NULL PRIMARY KEY,
  customer_id INT UNSIGNED NOT NULL,
  quantity SMALLINT UNSIGNED NOT NULL,
  price DOUBLE NOT NULL,
  note TEXT CHARACTER SET utf8mb4 NULL
);
INSERT INTO customers VALUES (1, 'Ada Lovelace', 'GB'), (2, 'Grace Hopper', 'US'), (3, 'Søren Kierkegaard', 'DK');
INSERT INTO orders VALUES (1001, 1, 2, 19.99, NULL), (1002, 2, 1, 5.5, 'gift wrap 🎁'), (1003, 3, 10, 0.25, '');
INSERT INTO orders VALUES (1004, 1, 65535, 1e9, 'bulk');
UPDATE orders SET quantity = quantity + 1, note = 'two more' WHERE id = 1001;
DELETE FROM orders WHERE id = 1003;
UPDATE customers SET name = 'Grace Brewster Hopper' WHERE id = 2;
