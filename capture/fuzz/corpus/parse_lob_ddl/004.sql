 buf_c := 'it''s a
chunk'; 
  dbms_lob.write(loc_c, 12, 1, buf_c);