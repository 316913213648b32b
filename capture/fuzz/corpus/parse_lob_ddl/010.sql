  alter table CUSTOMERS add (
    country VARCHAR(50)
  );