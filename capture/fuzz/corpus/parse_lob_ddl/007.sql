DECLARE 
 loc_c CLOB; 
 buf_c VARCHAR2(6156); 
 loc_b BLOB; 
 buf_b RAW(6156); 
 loc_nc NCLOB; 
 buf_nc NVARCHAR2(6156); 
BEGIN
 select "C" into loc_c from "ADMIN"."T" where "ID" = '4' for update;
 buf_c := 'abc'; 
  dbms_lob.write(loc_c, 3, 1, buf_c);
END;