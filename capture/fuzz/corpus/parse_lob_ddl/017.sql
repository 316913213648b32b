DECLARE 
 TempLob CLOB;
 buf_c   VARCHAR2(32767);
 Stmt    CLOB;
BEGIN
 DBMS_LOB.CreateTemporary(TempLob, FALSE);
 Stmt := 'update "DEBEZIUM"."TEST_TABLE" a set a."DATA" = :DATA where a."ID" = ''1'';';