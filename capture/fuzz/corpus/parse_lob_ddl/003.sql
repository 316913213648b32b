DECLARE 
 loc_c CLOB; 
 buf_c VARCHAR2(6156); 
 loc_b BLOB; 
 buf_b RAW(6156); 
 loc_nc NCLOB; 
 buf_nc NVARCHAR2(6156); 
BEGIN
 select "B" into loc_b from "ADMIN"."T" a where a."ID" = '4' and a.ROWID = 'AAAB' for update;
END;