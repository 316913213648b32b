 buf_nc := UNISTR('\0412\044B'); 
  DBMS_LOB.WRITE(loc_nc, 2, 3, buf_nc);